// The PostgreSQL + Redis store's bulk loader (storage/bulk.ts): the benchmark's seeding
// in batched statements, on a pool of its own beside the servers'. Only PostgreSQL holds
// what it writes; the limiter's windows in Redis start empty, as for any new key.
import type pg from 'pg';
import type { BulkLoader } from '../bulk.ts';
import { num, numOrNull } from '../rows.ts';
import { createPool, guarded, transaction, type Row } from './database.ts';

/** Rows per statement: large enough to amortise the round trip, small enough for the parameter arrays. */
const BATCH = 5_000;

function* batches<T>(items: readonly T[]): Generator<T[]> {
  for (let i = 0; i < items.length; i += BATCH) yield items.slice(i, i + BATCH);
}

/** Rows of one seeding statement. */
const SEED_ROWS = 100_000;

/** A loader of the store at `databaseUrl`, whose schema a store opened on it has already made. */
export function openPostgresBulkLoader(databaseUrl: string): BulkLoader {
  const pool = createPool(databaseUrl);
  return { ...postgresBulk(pool), close: () => pool.end() };
}

function postgresBulk(pool: pg.Pool): Omit<BulkLoader, 'close'> {
  const q = (text: string, values: unknown[] = []) => guarded(() => pool.query(text, values));
  const jobColumns = (jobs: Parameters<BulkLoader['insertQueuedJobs']>[0]) => [
    jobs.map((j) => j.id), jobs.map((j) => j.kind), jobs.map((j) => j.accountId), jobs.map((j) => j.keyId), jobs.map((j) => j.sandbox),
    jobs.map((j) => j.status), jobs.map((j) => JSON.stringify(j.input)), jobs.map((j) => j.webhookUrl), jobs.map((j) => j.credits), jobs.map((j) => j.period),
    jobs.map((j) => (j.error ? JSON.stringify(j.error) : null)), jobs.map((j) => (j.result ? JSON.stringify(j.result) : null)),
    jobs.map((j) => j.createdAt), jobs.map((j) => j.updatedAt), jobs.map((j) => j.completedAt), jobs.map((j) => j.attempts),
  ];
  // A seeded job is queued at its created_at: the seeded accounts' clocks have not moved.
  const INSERT_JOBS = `
    INSERT INTO jobs (id, kind, account_id, key_id, sandbox, status, input, webhook_url, credits, period, error, result, created_at, updated_at, completed_at, attempts, queued_at)
    SELECT id, kind, account_id, key_id, sandbox, status, input::jsonb, webhook_url, credits, period, error::jsonb, result::jsonb, created_at, updated_at, completed_at, attempts, created_at
    FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bool[], $6::text[], $7::text[], $8::text[], $9::int[], $10::text[], $11::text[], $12::text[], $13::bigint[], $14::bigint[], $15::bigint[], $16::int[])
      AS j(id, kind, account_id, key_id, sandbox, status, input, webhook_url, credits, period, error, result, created_at, updated_at, completed_at, attempts)`;

  return {
    async insertReadyAvatars(t, count) {
      // In statements of SEED_ROWS, each well inside the pool's query timeout on a busy machine.
      for (let done = 0; done < count; done += SEED_ROWS) {
        // md5 gives [0-9a-f]: 24 of them are 24 characters of the ID alphabet.
        await q(
          `INSERT INTO jobs (id, kind, account_id, key_id, sandbox, status, input, webhook_url, credits, period, error, result, created_at, updated_at, completed_at, attempts)
           SELECT 'av_' || substr(md5(random()::text || i::text), 1, 24), 'avatar', $1, $2, $3, 'ready', $4::jsonb, $5, $6, $7, NULL, $8::jsonb, $9, $10, $11, $12
           FROM generate_series($13::int, $14::int) AS i`,
          [t.accountId, t.keyId, t.sandbox, JSON.stringify(t.input), t.webhookUrl, t.credits, t.period, JSON.stringify(t.result ?? {}), t.createdAt, t.updatedAt, t.completedAt, t.attempts, done + 1, Math.min(count, done + SEED_ROWS)],
        );
      }
      await q('ANALYZE jobs'); // the planner's figures for a table that just grew by millions
    },
    async insertKeys(keys) {
      for (const batch of batches(keys)) {
        await q(
          `INSERT INTO api_keys (id, account_id, mode, prefix, hash, created_at)
           SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::bigint[])`,
          [batch.map((k) => k.id), batch.map((k) => k.accountId), batch.map((k) => k.mode), batch.map((k) => k.prefix), batch.map((k) => k.hash), batch.map((k) => k.createdAt)],
        );
      }
    },
    async insertQueuedJobs(jobs) {
      await transaction(pool, async (client) => {
        for (const batch of batches(jobs)) await client.query(INSERT_JOBS, jobColumns(batch));
        const reserved = new Map<string, { accountId: string; period: string; credits: number }>();
        for (const j of jobs) {
          const key = `${j.accountId}|${j.period}`;
          const r = reserved.get(key) ?? { accountId: j.accountId, period: j.period, credits: 0 };
          r.credits += j.credits;
          reserved.set(key, r);
        }
        for (const r of reserved.values()) {
          await client.query(
            `INSERT INTO credit_ledger (account_id, period, reserved) VALUES ($1, $2, $3)
             ON CONFLICT (account_id, period) DO UPDATE SET reserved = credit_ledger.reserved + excluded.reserved`,
            [r.accountId, r.period, r.credits],
          );
        }
      });
    },
    async insertFinishedJobs(rows) {
      await transaction(pool, async (client) => {
        for (const batch of batches(rows)) {
          await client.query(INSERT_JOBS, jobColumns(batch.map((r) => r.job)));
          const e = batch.map((r) => r.event);
          await client.query(
            `INSERT INTO webhook_events (id, type, job_id, account_id, url, destination, payload, status, attempts, next_attempt_at, last_error, created_at, delivered_at)
             SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::int[], $10::bigint[], $11::text[], $12::bigint[], $13::bigint[])`,
            [
              e.map((x) => x.id), e.map((x) => x.type), e.map((x) => x.jobId), e.map((x) => x.accountId), e.map((x) => x.url), e.map((x) => x.destination), e.map((x) => x.payload),
              e.map((x) => x.status), e.map((x) => x.attempts), e.map((x) => x.nextAttemptAt), e.map((x) => x.lastError), e.map((x) => x.createdAt), e.map((x) => x.deliveredAt),
            ],
          );
        }
      });
    },
    async sampleJobIds(accountId, kind, count) {
      const r = await q('SELECT id FROM jobs WHERE account_id = $1 AND kind = $2 ORDER BY random() LIMIT $3', [accountId, kind, count]);
      return r.rows.map((row: Row) => String(row.id));
    },
    async jobProgress(accountId) {
      const r = (
        await q(
          `SELECT COUNT(*) AS total, COUNT(*) FILTER (WHERE status IN ('ready', 'failed')) AS terminal,
                  MIN(created_at) AS min_created, MIN(completed_at) AS min_completed, MAX(completed_at) AS max_completed
           FROM jobs WHERE account_id = $1`,
          [accountId],
        )
      ).rows[0] as Row;
      return { total: num(r.total), terminal: num(r.terminal), minCreatedAt: numOrNull(r.min_created), minCompletedAt: numOrNull(r.min_completed), maxCompletedAt: numOrNull(r.max_completed) };
    },
    async jobTimes(accountId) {
      const r = await q('SELECT created_at, completed_at FROM jobs WHERE account_id = $1 AND completed_at IS NOT NULL', [accountId]);
      return r.rows.map((row: Row) => ({ createdAt: num(row.created_at), completedAt: num(row.completed_at) }));
    },
    async eventCounts(accountId) {
      const r = await q('SELECT status, COUNT(*) AS n FROM webhook_events WHERE account_id = $1 GROUP BY status', [accountId]);
      return Object.fromEntries(r.rows.map((row: Row) => [String(row.status), num(row.n)]));
    },
  };
}
