import type pg from 'pg';
import type { CreditBalance, OutboxEvent } from '../../domain/model.ts';
import type { JobStore, ReserveOutcome } from '../../domain/ports.ts';
import type { Completing } from './completeGroup.ts';
import type { Create } from './createGroup.ts';
import type { StatementGroup } from './statementGroup.ts';
import { guarded, newestFirstPage, transaction, type PageCondition } from './database.ts';
import { num, rowToBalance, rowToIdempotentRequest, rowToJob, type Row } from '../rows.ts';

const BALANCE = `
  SELECT a.monthly_credits::bigint + COALESCE(l.granted, 0) AS quota, COALESCE(l.reserved, 0) AS reserved, COALESCE(l.used, 0) AS used
  FROM accounts a LEFT JOIN credit_ledger l ON l.account_id = a.id AND l.period = $2
  WHERE a.id = $1`;

export async function insertEvent(client: pg.PoolClient, e: OutboxEvent): Promise<void> {
  await client.query(
    `INSERT INTO webhook_events (id, type, job_id, account_id, url, destination, payload, status, attempts, next_attempt_at, last_error, created_at, delivered_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) ON CONFLICT (id) DO NOTHING`,
    [e.id, e.type, e.jobId, e.accountId, e.url, e.destination, e.payload, e.status, e.attempts, e.nextAttemptAt, e.lastError, e.createdAt, e.deliveredAt],
  );
}

const KEPT_KEY = 'SELECT key, fingerprint, job_id, response, created_at, expires_at FROM idempotency_keys WHERE account_id = $1 AND key = $2 AND expires_at > $3';

/** A refusal for credits that must roll its transaction back (it had claimed an idempotency key). */
class Refused extends Error {
  readonly balance: CreditBalance;
  constructor(balance: CreditBalance) {
    super('insufficient credits');
    this.balance = balance;
  }
}

/** What rowToJob reads. */
const JOB_COLUMNS = 'id, kind, account_id, key_id, sandbox, status, input, webhook_url, credits, period, error, result, created_at, updated_at, completed_at, attempts';

export function postgresJobs(pool: pg.Pool, groups: { creates: StatementGroup<Create, ReserveOutcome>; completions: StatementGroup<Completing, boolean> }): JobStore {
  const { creates, completions } = groups;
  const q = (text: string, values: unknown[] = []) => guarded(() => pool.query(text, values));

  const jobStore: JobStore = {
    async createJobReservingCredits(job, queuedAt, idempotency): Promise<ReserveOutcome> {
      // Without a key, with the creates that arrive alongside it: one statement, one commit.
      if (!idempotency) return creates.ask({ job, queuedAt });
      try {
        return await transaction(pool, async (client) => {
          // The key first: a concurrent request with the same key waits here for this
          // transaction, then finds the key kept (or free again, if this one rolled back).
          // An expired key of the account is taken over.
          const claimed = await client.query(
            `INSERT INTO idempotency_keys (account_id, key, fingerprint, job_id, response, created_at, expires_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7)
             ON CONFLICT (account_id, key) DO UPDATE SET
               fingerprint = excluded.fingerprint, job_id = excluded.job_id, response = excluded.response,
               created_at = excluded.created_at, expires_at = excluded.expires_at
             WHERE idempotency_keys.expires_at <= excluded.created_at`,
            [job.accountId, idempotency.key, idempotency.fingerprint, job.id, idempotency.response, job.createdAt, idempotency.expiresAt],
          );
          if (claimed.rowCount === 0) {
            const kept = await client.query(KEPT_KEY, [job.accountId, idempotency.key, job.createdAt]);
            return { ok: false, kept: rowToIdempotentRequest(kept.rows[0]) };
          }
          await client.query('INSERT INTO credit_ledger (account_id, period) VALUES ($1, $2) ON CONFLICT DO NOTHING', [job.accountId, job.period]);
          // One conditional UPDATE decides: concurrent reservations on the same row wait for
          // each other and re-check the condition, so the balance can never go below zero.
          const reserved = await client.query(
            `UPDATE credit_ledger l SET reserved = l.reserved + $3
             FROM accounts a
             WHERE l.account_id = $1 AND l.period = $2 AND a.id = l.account_id
               AND a.monthly_credits::bigint + l.granted - l.reserved - l.used >= $3`,
            [job.accountId, job.period, job.credits],
          );
          if (reserved.rowCount === 0) {
            const balance = rowToBalance(job.period, (await client.query(BALANCE, [job.accountId, job.period])).rows[0]);
            // A claimed key must not outlive a refusal: roll it back with everything else.
            throw new Refused(balance);
          }
          await client.query(
            `INSERT INTO jobs (id, kind, account_id, key_id, sandbox, status, input, webhook_url, credits, period, created_at, updated_at, attempts, queued_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, 0, $13)`,
            [job.id, job.kind, job.accountId, job.keyId, job.sandbox, job.status, JSON.stringify(job.input), job.webhookUrl, job.credits, job.period, job.createdAt, job.updatedAt, queuedAt],
          );
          return { ok: true, job };
        });
      } catch (error) {
        if (error instanceof Refused) return { ok: false, balance: error.balance };
        throw error;
      }
    },

    async listJobs({ accountId, kind, limit, after, status, avatarId }) {
      const conditions: PageCondition[] = [['account_id', accountId], ['kind', kind], ['status', status], ["input->>'avatar_id'", avatarId]];
      return (await newestFirstPage(pool, 'jobs', JOB_COLUMNS, conditions, after, limit)).map(rowToJob);
    },

    async findIdempotentRequest(accountId, key, now) {
      const r = await q(KEPT_KEY, [accountId, key, now]);
      return r.rows[0] ? rowToIdempotentRequest(r.rows[0]) : null;
    },

    async getJob(id) {
      // Named: prepared once per connection, as the hottest read of the API. Its columns
      // are named, so a migration that adds one does not change a prepared statement's result.
      const r = await guarded(() => pool.query({ name: 'job-by-id', text: `SELECT ${JOB_COLUMNS} FROM jobs WHERE id = $1`, values: [id] }));
      return r.rows[0] ? rowToJob(r.rows[0]) : null;
    },

    async claimJob(workerId, now, leaseUntil, skipVideosOf = []) {
      // One claim's rule, in one statement: claimJobs's of one row.
      return (await jobStore.claimJobs(workerId, now, leaseUntil, 1, skipVideosOf))[0] ?? null;
    },

    async claimJobs(workerId, now, leaseUntil, limit, skipVideosOf = []) {
      // claimJob's rows, up to `limit` in one statement: the queue's first `limit` runnable
      // rows, each locked or skipped as claimJob's one (so that concurrent claims take
      // different rows rather than wait); of the videos of one account among them, the
      // first only. A video passed over is unlocked as the statement ends, for the next claim.
      // The rows are read in queue order whatever the statistics say (migration 14), and
      // the statement is not prepared: PostgreSQL would keep one plan for it, made while
      // the table was small (read all of jobs and match the claimed IDs by hash), where
      // planned each time it finds the few claimed rows by their key.
      const r = await guarded(() =>
        pool.query({
          text: `
            WITH candidates AS (SELECT * FROM runnable_jobs($1::bigint, $4::text[], $5::integer)),
            picked AS (
              SELECT id FROM (SELECT id, kind, row_number() OVER (PARTITION BY account_id, kind ORDER BY queued_at) AS nth FROM candidates) c
              WHERE kind <> 'avatar_video' OR nth = 1)
            UPDATE jobs SET
              updated_at = CASE WHEN status = 'queued' THEN $1::bigint + (SELECT clock_offset_ms FROM accounts WHERE accounts.id = jobs.account_id) ELSE updated_at END,
              status = 'processing', attempts = attempts + 1, lease_owner = $2::text, lease_until = $3::bigint
            WHERE id IN (SELECT id FROM picked)
            RETURNING ${JOB_COLUMNS}, queued_at`,
          values: [now, workerId, leaseUntil, skipVideosOf, limit],
        }),
      );
      return r.rows.sort((a: Row, b: Row) => num(a.queued_at) - num(b.queued_at)).map(rowToJob);
    },

    async renewLease(jobId, workerId, leaseUntil) {
      const r = await q(`UPDATE jobs SET lease_until = $1 WHERE id = $2 AND lease_owner = $3 AND status = 'processing'`, [leaseUntil, jobId, workerId]);
      return (r.rowCount ?? 0) > 0;
    },

    async releaseLease(jobId, workerId, now) {
      await q(
        `UPDATE jobs SET lease_until = $1, lease_owner = NULL, attempts = GREATEST(attempts - 1, 0)
         WHERE id = $2 AND lease_owner = $3 AND status = 'processing'`,
        [now - 1, jobId, workerId],
      );
    },

    async completeJob(jobId, completion, event) {
      // With the completions that arrive alongside it: one statement, one commit. The job's
      // row is locked by its UPDATE, whose WHERE is judged again on the row's latest version
      // once a concurrent completion commits, so of two completions only the first changes
      // the job, moves its credits and records its event (ST-TERMINAL); the others change
      // nothing and answer false.
      return completions.ask({ jobId, completion, event });
    },

    async countActiveJobs() {
      const r = await q(`SELECT status, COUNT(*) AS n FROM jobs WHERE status IN ('queued', 'processing') GROUP BY status`);
      const count = (s: string) => num(r.rows.find((x: Row) => x.status === s)?.n ?? 0);
      return { queued: count('queued'), processing: count('processing') };
    },

    async creditBalance(accountId, period) {
      return rowToBalance(period, (await q(BALANCE, [accountId, period])).rows[0]);
    },
  };
  return jobStore;
}
