import type pg from 'pg';
import { withinCreditBound } from '../../domain/credits.ts';
import type { AccountStore, ClockMoved, CreditsChanged } from '../../domain/ports.ts';
import type { AccountVersions } from './redis/accountVersions.ts';
import { num, rowToAccount, rowToCreditsRefusal, rowToKey } from '../rows.ts';
import { guarded, transaction, type Row } from './database.ts';
import { createStatementGroup } from './statementGroup.ts';
import type { Account } from '../../domain/model.ts';

/** Groups of account reads under way at once, and the IDs in one. */
const ACCOUNT_READS_IN_FLIGHT = 2;
const ACCOUNT_READS_MAX = 256;

/** What rowToAccount reads, named: a prepared statement's columns must not change under it when a migration adds one. */
const ACCOUNT_COLUMNS = 'id, name, monthly_credits, plan, signing_secret, created_at, clock_offset_ms, owner_id, standard_webhooks';

export function postgresAccounts(pool: pg.Pool, versions: AccountVersions): AccountStore {
  const q = (text: string, values: unknown[] = []) => guarded(() => pool.query(text, values));
  /** Prepared once per connection: the reads every request makes. */
  const named = (name: string, text: string, values: unknown[]) => guarded(() => pool.query({ name, text, values }));
  const changed = (r: pg.QueryResult) => (r.rowCount ?? 0) > 0;
  const keyRow = async (hash: string) =>
    (
      await named(
        'key-by-hash',
        `SELECT k.id AS key_id, k.mode, k.prefix, k.created_at AS key_created_at, k.revoked_at,
                a.id AS account_id, a.name, a.monthly_credits, a.plan, a.signing_secret, a.created_at, a.clock_offset_ms, a.owner_id, a.standard_webhooks
         FROM api_keys k JOIN accounts a ON a.id = k.account_id
         WHERE k.hash = $1 AND k.revoked_at IS NULL`,
        [hash],
      )
    ).rows[0] as Row | undefined;
  // The reads of accounts asked together (the completions of the jobs a runner claimed
  // together each read their account's clock) in one statement. Each is sent after it was
  // asked, so it is as current as a read of its own.
  const accountReads = createStatementGroup<string, Account | null>(
    async (ids) => {
      const r = await named('accounts-by-id', `SELECT ${ACCOUNT_COLUMNS} FROM accounts WHERE id = ANY($1::text[])`, [[...new Set(ids)]]);
      const found = new Map(r.rows.map((row: Row) => [String(row.id), row]));
      return ids.map((id) => {
        const row = found.get(id);
        return row ? rowToAccount(row) : null;
      });
    },
    { inFlight: ACCOUNT_READS_IN_FLIGHT, max: ACCOUNT_READS_MAX },
  );
  return {
    async createAccount(a) {
      return transaction(pool, async (client) => {
        if (a.ownerId !== null) {
          // The owner's row is locked so that it cannot become a workspace, or go, before this commits.
          const owner = await client.query('SELECT owner_id FROM accounts WHERE id = $1 FOR SHARE', [a.ownerId]);
          if (!owner.rows[0]) return { ok: false, reason: 'owner_not_found' } as const;
          if (owner.rows[0].owner_id !== null) return { ok: false, reason: 'owner_is_workspace' } as const;
        }
        await client.query('INSERT INTO accounts (id, name, monthly_credits, plan, signing_secret, created_at, owner_id) VALUES ($1, $2, $3, $4, $5, $6, $7)', [
          a.id, a.name, a.monthlyCredits, JSON.stringify(a.plan), a.signingSecret, a.createdAt, a.ownerId,
        ]);
        return { ok: true } as const;
      });
    },
    getAccount: (id) => accountReads.ask(id),
    async listAccounts() {
      return (await q('SELECT * FROM accounts ORDER BY created_at')).rows.map((row) => rowToAccount(row));
    },
    async listWorkspaces(ownerId) {
      return (await q('SELECT * FROM accounts WHERE owner_id = $1 ORDER BY created_at, id', [ownerId])).rows.map((row) => rowToAccount(row));
    },
    async countAccounts() {
      return num((await q('SELECT COUNT(*) AS n FROM accounts')).rows[0].n);
    },
    async createKey(k) {
      return transaction(pool, async (client) => {
        // The account row's lock orders this against a clock move of the same account.
        const account = await client.query('SELECT clock_offset_ms FROM accounts WHERE id = $1 FOR UPDATE', [k.accountId]);
        if (k.mode === 'live' && num(account.rows[0]?.clock_offset_ms ?? 0) > 0) return false;
        await client.query('INSERT INTO api_keys (id, account_id, mode, prefix, hash, created_at) VALUES ($1, $2, $3, $4, $5, $6)', [k.id, k.accountId, k.mode, k.prefix, k.hash, k.createdAt]);
        return true;
      });
    },
    async findKeyByHash(hash) {
      // The version is read before the row it stands for: a change committed after the
      // version was read moves it on, so the record is found stale on its first count.
      // The row is read first too, for the account it belongs to (which never changes).
      const first = await keyRow(hash);
      if (!first) return null;
      const version = await versions.current(String(first.account_id));
      const row = await keyRow(hash);
      if (!row) return null;
      return { key: rowToKey(row), account: rowToAccount(row, row.account_id), version };
    },
    async revokeKey(keyId, at) {
      const owner = await q('SELECT account_id FROM api_keys WHERE id = $1', [keyId]);
      if (!owner.rows[0]) return false;
      return versions.changing(String(owner.rows[0].account_id), async () =>
        changed(await q('UPDATE api_keys SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL', [at, keyId])),
      );
    },
    async setPlan(accountId, plan) {
      return versions.changing(accountId, async () => changed(await q('UPDATE accounts SET plan = $1 WHERE id = $2', [JSON.stringify(plan), accountId])));
    },
    async setMonthlyCredits(accountId, credits) {
      return versions.changing(accountId, () => transaction(pool, async (client): Promise<CreditsChanged> => {
        // The account row's lock orders this against another change of its credits, which
        // would otherwise be judged on what this one is about to change. NO KEY UPDATE:
        // a create's reference to the account (KEY SHARE) does not wait for it.
        const account = await client.query('SELECT monthly_credits FROM accounts WHERE id = $1 FOR NO KEY UPDATE', [accountId]);
        if (!account.rows[0]) return { ok: false, reason: 'not_found' };
        // The month with the most granted is the one the new monthly credits would take furthest.
        const month = (await client.query('SELECT period, granted FROM credit_ledger WHERE account_id = $1 ORDER BY granted DESC LIMIT 1', [accountId])).rows[0] as Row | undefined;
        if (!withinCreditBound(credits, month?.granted ?? 0)) return rowToCreditsRefusal({ ...account.rows[0], period: month?.period ?? null, granted: month?.granted ?? 0 });
        await client.query('UPDATE accounts SET monthly_credits = $1 WHERE id = $2', [credits, accountId]);
        return { ok: true };
      }));
    },
    async grantCredits(accountId, period, credits) {
      return transaction(pool, async (client): Promise<CreditsChanged> => {
        const account = await client.query('SELECT monthly_credits FROM accounts WHERE id = $1 FOR NO KEY UPDATE', [accountId]);
        if (!account.rows[0]) return { ok: false, reason: 'not_found' };
        const granted = (await client.query('SELECT granted FROM credit_ledger WHERE account_id = $1 AND period = $2', [accountId, period])).rows[0]?.granted ?? 0;
        if (!withinCreditBound(account.rows[0].monthly_credits, granted, credits)) return rowToCreditsRefusal({ ...account.rows[0], period, granted });
        await client.query(
          `INSERT INTO credit_ledger (account_id, period, granted) VALUES ($1, $2, $3)
           ON CONFLICT (account_id, period) DO UPDATE SET granted = credit_ledger.granted + EXCLUDED.granted`,
          [accountId, period, credits],
        );
        return { ok: true };
      });
    },
    async setSigningSecret(accountId, secret) {
      return versions.changing(accountId, async () => changed(await q('UPDATE accounts SET signing_secret = $1 WHERE id = $2', [secret, accountId])));
    },
    async setStandardWebhooks(accountId, on) {
      return versions.changing(accountId, async () => changed(await q('UPDATE accounts SET standard_webhooks = $1 WHERE id = $2', [on, accountId])));
    },
    async advanceClock(accountId, move, maxOffsetMs) {
      return versions.changing(accountId, () => transaction(pool, async (client): Promise<ClockMoved> => {
        const account = await client.query('SELECT clock_offset_ms FROM accounts WHERE id = $1 FOR UPDATE', [accountId]);
        if (!account.rows[0]) return { ok: false, reason: 'not_found' };
        const live = await client.query("SELECT 1 FROM api_keys WHERE account_id = $1 AND mode = 'live' AND revoked_at IS NULL LIMIT 1", [accountId]);
        if (live.rows.length > 0) return { ok: false, reason: 'live_key' };
        const current = num(account.rows[0].clock_offset_ms);
        const offsetMs = 'byMs' in move ? current + move.byMs : Math.max(current, move.toOffsetMs);
        if (offsetMs > maxOffsetMs) return { ok: false, reason: 'offset_limit', offsetMs: current };
        const movedMs = offsetMs - current;
        if (movedMs > 0) {
          await client.query('UPDATE accounts SET clock_offset_ms = $1 WHERE id = $2', [offsetMs, accountId]);
          await client.query("UPDATE webhook_events SET next_attempt_at = next_attempt_at - $1 WHERE account_id = $2 AND status = 'pending' AND lease_until IS NULL", [movedMs, accountId]);
        }
        return { ok: true, offsetMs, movedMs };
      }));
    },
  };
}
