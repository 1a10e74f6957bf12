import { withinCreditBound } from '../../domain/credits.ts';
import type { AccountStore, ClockMoved, CreditsChanged, NewAccount, NewApiKey } from '../../domain/ports.ts';
import type { AccountVersions } from './accountVersions.ts';
import { rowToAccount, rowToCreditsRefusal, rowToKey } from '../rows.ts';
import { transaction, type Db, type Row } from './database.ts';

/**
 * Has a statement that reads an account's credits hand its integers over as BigInt: a store
 * may hold an amount past 2^53 (written before the bound held, or by hand), which
 * node:sqlite refuses to read as a number, failing every request of that account. The
 * reader (rows.ts) reads it within the bound instead.
 */
export function readExactly<S extends { setReadBigInts(on: boolean): void }>(statement: S): S {
  statement.setReadBigInts(true);
  return statement;
}

export function embeddedAccounts(db: Db, versions: AccountVersions): AccountStore {
  const byHash = db.prepare(`
    SELECT k.id AS key_id, k.mode, k.prefix, k.created_at AS key_created_at, k.revoked_at, a.*, a.id AS account_id
    FROM api_keys k JOIN accounts a ON a.id = k.account_id
    WHERE k.hash = ? AND k.revoked_at IS NULL`);
  readExactly(byHash);
  const changed = (r: { changes: number | bigint }) => Number(r.changes) > 0;
  /** A change to an account or a key: the records kept of it are read again, in every process, from the next request on. */
  const changing = async (r: { changes: number | bigint }) => {
    versions.bump();
    await versions.settled();
    return changed(r);
  };

  return {
    async createAccount(a: NewAccount) {
      return transaction(db, () => {
        if (a.ownerId !== null) {
          const owner = db.prepare('SELECT owner_id FROM accounts WHERE id = ?').get(a.ownerId) as Row | undefined;
          if (!owner) return { ok: false, reason: 'owner_not_found' } as const;
          if (owner.owner_id !== null) return { ok: false, reason: 'owner_is_workspace' } as const;
        }
        db.prepare('INSERT INTO accounts (id, name, monthly_credits, plan, signing_secret, created_at, owner_id) VALUES (?, ?, ?, ?, ?, ?, ?)').run(
          a.id, a.name, a.monthlyCredits, JSON.stringify(a.plan), a.signingSecret, a.createdAt, a.ownerId,
        );
        return { ok: true } as const;
      });
    },
    async getAccount(id) {
      const row = readExactly(db.prepare('SELECT * FROM accounts WHERE id = ?')).get(id) as Row | undefined;
      return row ? rowToAccount(row) : null;
    },
    async listAccounts() {
      return (readExactly(db.prepare('SELECT * FROM accounts ORDER BY created_at')).all() as Row[]).map((row) => rowToAccount(row));
    },
    async listWorkspaces(ownerId) {
      return (readExactly(db.prepare('SELECT * FROM accounts WHERE owner_id = ? ORDER BY created_at, id')).all(ownerId) as Row[]).map((row) => rowToAccount(row));
    },
    async countAccounts() {
      return Number((db.prepare('SELECT COUNT(*) AS n FROM accounts').get() as Row).n);
    },
    async createKey(k: NewApiKey) {
      return transaction(db, () => {
        if (k.mode === 'live' && db.prepare('SELECT 1 FROM accounts WHERE id = ? AND clock_offset_ms > 0').get(k.accountId)) return false;
        db.prepare('INSERT INTO api_keys (id, account_id, mode, prefix, hash, created_at) VALUES (?, ?, ?, ?, ?, ?)').run(
          k.id, k.accountId, k.mode, k.prefix, k.hash, k.createdAt,
        );
        return true;
      });
    },
    async findKeyByHash(hash) {
      // An unknown key costs one read; a known one is read again after the version, which
      // must come before the row it stands for.
      if (!byHash.get(hash)) return null;
      const version = versions.current();
      const row = byHash.get(hash) as Row | undefined;
      return row ? { key: rowToKey(row), account: rowToAccount(row), version } : null;
    },
    async revokeKey(keyId, at) {
      return changing(db.prepare('UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL').run(at, keyId));
    },
    async setPlan(accountId, plan) {
      return changing(db.prepare('UPDATE accounts SET plan = ? WHERE id = ?').run(JSON.stringify(plan), accountId));
    },
    async setMonthlyCredits(accountId, credits) {
      // Transactions here run one at a time: what is read is what the write is judged on.
      const outcome = transaction(db, (): CreditsChanged => {
        // The month with the most granted is the one the new monthly credits would take furthest.
        const row = readExactly(db.prepare(`
          SELECT a.monthly_credits, l.period, COALESCE(l.granted, 0) AS granted
          FROM accounts a LEFT JOIN credit_ledger l ON l.account_id = a.id
          WHERE a.id = ? ORDER BY l.granted DESC LIMIT 1`)).get(accountId) as Row | undefined;
        if (!row) return { ok: false, reason: 'not_found' };
        if (!withinCreditBound(credits, row.granted)) return rowToCreditsRefusal(row);
        db.prepare('UPDATE accounts SET monthly_credits = ? WHERE id = ?').run(credits, accountId);
        return { ok: true };
      });
      if (outcome.ok) {
        versions.bump();
        await versions.settled();
      }
      return outcome;
    },
    async grantCredits(accountId, period, credits) {
      return transaction(db, (): CreditsChanged => {
        const row = readExactly(db.prepare(`
          SELECT a.monthly_credits, ? AS period, COALESCE(l.granted, 0) AS granted
          FROM accounts a LEFT JOIN credit_ledger l ON l.account_id = a.id AND l.period = ?
          WHERE a.id = ?`)).get(period, period, accountId) as Row | undefined;
        if (!row) return { ok: false, reason: 'not_found' };
        if (!withinCreditBound(row.monthly_credits, row.granted, credits)) return rowToCreditsRefusal(row);
        db.prepare(`
          INSERT INTO credit_ledger (account_id, period, granted) VALUES (?, ?, ?)
          ON CONFLICT (account_id, period) DO UPDATE SET granted = granted + excluded.granted`).run(accountId, period, credits);
        return { ok: true };
      });
    },
    async setSigningSecret(accountId, secret) {
      return changing(db.prepare('UPDATE accounts SET signing_secret = ? WHERE id = ?').run(secret, accountId));
    },
    async setStandardWebhooks(accountId, on) {
      return changing(db.prepare('UPDATE accounts SET standard_webhooks = ? WHERE id = ?').run(on ? 1 : 0, accountId));
    },
    async advanceClock(accountId, move, maxOffsetMs) {
      const moved = transaction(db, (): ClockMoved => {
        const row = db.prepare('SELECT clock_offset_ms FROM accounts WHERE id = ?').get(accountId) as Row | undefined;
        if (!row) return { ok: false, reason: 'not_found' };
        if (db.prepare("SELECT 1 FROM api_keys WHERE account_id = ? AND mode = 'live' AND revoked_at IS NULL").get(accountId)) return { ok: false, reason: 'live_key' };
        const current = Number(row.clock_offset_ms);
        const offsetMs = 'byMs' in move ? current + move.byMs : Math.max(current, move.toOffsetMs);
        if (offsetMs > maxOffsetMs) return { ok: false, reason: 'offset_limit', offsetMs: current };
        const movedMs = offsetMs - current;
        if (movedMs > 0) {
          db.prepare('UPDATE accounts SET clock_offset_ms = ? WHERE id = ?').run(offsetMs, accountId);
          db.prepare("UPDATE webhook_events SET next_attempt_at = next_attempt_at - ? WHERE account_id = ? AND status = 'pending' AND lease_until IS NULL").run(movedMs, accountId);
          versions.bump();
        }
        return { ok: true, offsetMs, movedMs };
      });
      if (moved.ok && moved.movedMs > 0) await versions.settled();
      return moved;
    },
  };
}
