// The embedded store's bulk loader (storage/bulk.ts): the benchmark's seeding in one
// transaction per call, on a SQLite connection of its own beside the server's.
import type { BulkLoader } from '../bulk.ts';
import { numOrNull } from '../rows.ts';
import { openDatabase, transaction, type Db, type Row } from './database.ts';
import { insertEvent } from './jobs.ts';

/** A loader of the store in `file` (the server's may be open on it too). */
export function openEmbeddedBulkLoader(file: string): BulkLoader {
  const db = openDatabase(file);
  return {
    ...embeddedBulk(db),
    async close() {
      if (db.isOpen) db.close();
    },
  };
}

function embeddedBulk(db: Db): Omit<BulkLoader, 'close'> {
  // A seeded job is queued at its created_at: the seeded accounts' clocks have not moved.
  const insertJob = db.prepare(`
    INSERT INTO jobs (id, kind, account_id, key_id, sandbox, status, input, webhook_url, credits, period, error, result, created_at, updated_at, completed_at, attempts, queued_at)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
  const writeJob = (j: Parameters<BulkLoader['insertQueuedJobs']>[0][number]) =>
    insertJob.run(
      j.id, j.kind, j.accountId, j.keyId, j.sandbox ? 1 : 0, j.status, JSON.stringify(j.input), j.webhookUrl, j.credits, j.period,
      j.error ? JSON.stringify(j.error) : null, j.result ? JSON.stringify(j.result) : null, j.createdAt, j.updatedAt, j.completedAt, j.attempts, j.createdAt,
    );

  return {
    async insertReadyAvatars(t, count) {
      // 12 random bytes in lower-case hex: 24 characters of the ID alphabet.
      transaction(db, () =>
        db
          .prepare(`
            INSERT INTO jobs (id, kind, account_id, key_id, sandbox, status, input, webhook_url, credits, period, error, result, created_at, updated_at, completed_at, attempts)
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
            SELECT 'av_' || lower(hex(randomblob(12))), 'avatar', ?, ?, ?, 'ready', ?, ?, ?, ?, NULL, ?, ?, ?, ?, ? FROM n`)
          .run(count, t.accountId, t.keyId, t.sandbox ? 1 : 0, JSON.stringify(t.input), t.webhookUrl, t.credits, t.period, JSON.stringify(t.result ?? {}), t.createdAt, t.updatedAt, t.completedAt, t.attempts),
      );
    },
    async insertKeys(keys) {
      transaction(db, () => {
        const insert = db.prepare('INSERT INTO api_keys (id, account_id, mode, prefix, hash, created_at) VALUES (?, ?, ?, ?, ?, ?)');
        for (const k of keys) insert.run(k.id, k.accountId, k.mode, k.prefix, k.hash, k.createdAt);
      });
    },
    async insertQueuedJobs(jobs) {
      transaction(db, () => {
        const reserve = db.prepare(`
          INSERT INTO credit_ledger (account_id, period, reserved) VALUES (?, ?, ?)
          ON CONFLICT (account_id, period) DO UPDATE SET reserved = reserved + excluded.reserved`);
        for (const j of jobs) {
          writeJob(j);
          reserve.run(j.accountId, j.period, j.credits);
        }
      });
    },
    async insertFinishedJobs(rows) {
      transaction(db, () => {
        for (const { job, event } of rows) {
          writeJob(job);
          insertEvent(db, event);
        }
      });
    },
    async sampleJobIds(accountId, kind, count) {
      const rows = db.prepare('SELECT id FROM jobs WHERE account_id = ? AND kind = ? ORDER BY random() LIMIT ?').all(accountId, kind, count) as Row[];
      return rows.map((r) => String(r.id));
    },
    async jobProgress(accountId) {
      const r = db
        .prepare(`
          SELECT COUNT(*) AS total, COALESCE(SUM(status IN ('ready', 'failed')), 0) AS terminal,
                 MIN(created_at) AS min_created, MIN(completed_at) AS min_completed, MAX(completed_at) AS max_completed
          FROM jobs WHERE account_id = ?`)
        .get(accountId) as Row;
      return { total: Number(r.total), terminal: Number(r.terminal), minCreatedAt: numOrNull(r.min_created), minCompletedAt: numOrNull(r.min_completed), maxCompletedAt: numOrNull(r.max_completed) };
    },
    async jobTimes(accountId) {
      const rows = db.prepare('SELECT created_at, completed_at FROM jobs WHERE account_id = ? AND completed_at IS NOT NULL').all(accountId) as Row[];
      return rows.map((r) => ({ createdAt: Number(r.created_at), completedAt: Number(r.completed_at) }));
    },
    async eventCounts(accountId) {
      const rows = db.prepare('SELECT status, COUNT(*) AS n FROM webhook_events WHERE account_id = ? GROUP BY status').all(accountId) as Row[];
      return Object.fromEntries(rows.map((r) => [String(r.status), Number(r.n)]));
    },
  };
}
