import type { CreditBalance, Job, OutboxEvent } from '../../domain/model.ts';
import type { Completion, JobStore, ReserveOutcome } from '../../domain/ports.ts';
import { newestFirstPage, type CommitGroup, type Db, type PageCondition } from './database.ts';
import { rowToBalance, rowToIdempotentRequest, rowToJob, type Row } from '../rows.ts';
import { claimEach } from '../claims.ts';
import { readExactly } from './accounts.ts';

export function insertEvent(db: Db, e: OutboxEvent): void {
  db.prepare(`
    INSERT INTO webhook_events (id, type, job_id, account_id, url, destination, payload, status, attempts, next_attempt_at, last_error, created_at, delivered_at)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
    ON CONFLICT (id) DO NOTHING`).run(
    e.id, e.type, e.jobId, e.accountId, e.url, e.destination, e.payload, e.status, e.attempts, e.nextAttemptAt, e.lastError, e.createdAt, e.deliveredAt,
  );
}

export function embeddedJobs(db: Db, grouped: CommitGroup): JobStore {
  const getById = db.prepare('SELECT * FROM jobs WHERE id = ?');
  const keptKey = db.prepare('SELECT * FROM idempotency_keys WHERE account_id = ? AND key = ? AND expires_at > ?');

  function balance(accountId: string, period: string): CreditBalance {
    const row = readExactly(db.prepare(`
      SELECT a.monthly_credits + COALESCE(l.granted, 0) AS quota, COALESCE(l.reserved, 0) AS reserved, COALESCE(l.used, 0) AS used
      FROM accounts a LEFT JOIN credit_ledger l ON l.account_id = a.id AND l.period = ?
      WHERE a.id = ?`)).get(period, accountId) as Row | undefined;
    return rowToBalance(period, row);
  }

  /** The runnable job queued first, claimed for `workerId` (claimJob); inside a transaction. */
  function claimOne(workerId: string, now: number, leaseUntil: number, skipVideosOf: readonly string[]): Job | null {
    const row = db.prepare(`
      SELECT id FROM jobs
      WHERE status IN ('queued', 'processing') AND (status = 'queued' OR lease_until < ?)
        AND NOT (kind = 'avatar_video' AND account_id IN (SELECT value FROM json_each(?)))
      ORDER BY queued_at LIMIT 1`).get(now, JSON.stringify(skipVideosOf)) as Row | undefined;
    if (!row) return null;
    // The record's times are its account's: the claim's time moved by the account's clock.
    db.prepare(`
      UPDATE jobs SET
        updated_at = CASE WHEN status = 'queued' THEN ? + (SELECT clock_offset_ms FROM accounts WHERE accounts.id = jobs.account_id) ELSE updated_at END,
        status = 'processing', attempts = attempts + 1, lease_owner = ?, lease_until = ?
      WHERE id = ?`).run(now, workerId, leaseUntil, row.id as string);
    return rowToJob(getById.get(row.id as string) as Row);
  }

  return {
    async createJobReservingCredits(job, queuedAt, idempotency): Promise<ReserveOutcome> {
      return grouped.run(() => {
        // Transactions here run one at a time, so the key is looked at, then written with the job.
        const kept = idempotency && (keptKey.get(job.accountId, idempotency.key, job.createdAt) as Row | undefined);
        if (kept) return { ok: false, kept: rowToIdempotentRequest(kept) };
        const before = balance(job.accountId, job.period);
        if (before.available < job.credits) return { ok: false, balance: before };
        db.prepare(`
          INSERT INTO credit_ledger (account_id, period, reserved) VALUES (?, ?, ?)
          ON CONFLICT (account_id, period) DO UPDATE SET reserved = reserved + excluded.reserved`).run(job.accountId, job.period, job.credits);
        db.prepare(`
          INSERT INTO jobs (id, kind, account_id, key_id, sandbox, status, input, webhook_url, credits, period, created_at, updated_at, attempts, queued_at)
          VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?)`).run(
          job.id, job.kind, job.accountId, job.keyId, job.sandbox ? 1 : 0, job.status, JSON.stringify(job.input),
          job.webhookUrl, job.credits, job.period, job.createdAt, job.updatedAt, queuedAt,
        );
        if (idempotency) {
          // An expired key of the account is taken over.
          db.prepare(`
            INSERT OR REPLACE INTO idempotency_keys (account_id, key, fingerprint, job_id, response, created_at, expires_at)
            VALUES (?, ?, ?, ?, ?, ?, ?)`).run(job.accountId, idempotency.key, idempotency.fingerprint, job.id, idempotency.response, job.createdAt, idempotency.expiresAt);
        }
        return { ok: true, job };
      });
    },

    async listJobs({ accountId, kind, limit, after, status, avatarId }) {
      const conditions: PageCondition[] = [['account_id', accountId], ['kind', kind], ['status', status], ["json_extract(input, '$.avatar_id')", avatarId]];
      return newestFirstPage(db, 'jobs', conditions, after, limit).map(rowToJob);
    },

    async findIdempotentRequest(accountId, key, now) {
      const row = keptKey.get(accountId, key, now) as Row | undefined;
      return row ? rowToIdempotentRequest(row) : null;
    },

    async getJob(id) {
      const row = getById.get(id) as Row | undefined;
      return row ? rowToJob(row) : null;
    },

    async claimJob(workerId, now, leaseUntil, skipVideosOf = []) {
      return grouped.run(() => claimOne(workerId, now, leaseUntil, skipVideosOf));
    },

    async claimJobs(workerId, now, leaseUntil, limit, skipVideosOf = []) {
      return grouped.run(() => claimEach(limit, skipVideosOf, (skip) => claimOne(workerId, now, leaseUntil, skip)));
    },

    async renewLease(jobId, workerId, leaseUntil) {
      const r = db.prepare(`UPDATE jobs SET lease_until = ? WHERE id = ? AND lease_owner = ? AND status = 'processing'`).run(leaseUntil, jobId, workerId);
      return Number(r.changes) > 0;
    },

    async releaseLease(jobId, workerId, now) {
      // Back to the head of the queue; the attempt it used is given back too.
      db.prepare(`
        UPDATE jobs SET lease_until = ?, lease_owner = NULL, attempts = MAX(attempts - 1, 0)
        WHERE id = ? AND lease_owner = ? AND status = 'processing'`).run(now - 1, jobId, workerId);
    },

    async completeJob(jobId, c: Completion, event) {
      return grouped.run(() => {
        const row = getById.get(jobId) as Row | undefined;
        if (!row || row.status === 'ready' || row.status === 'failed') return false;
        const credits = Number(row.credits);
        db.prepare(`
          UPDATE jobs SET status = ?, error = ?, result = ?, updated_at = ?, completed_at = ?, lease_owner = NULL, lease_until = NULL
          WHERE id = ?`).run(c.status, c.error ? JSON.stringify(c.error) : null, c.result ? JSON.stringify(c.result) : null, c.at, c.at, jobId);
        // Capture on ready, release on failed: the reservation leaves `reserved` either way.
        db.prepare(`
          UPDATE credit_ledger SET reserved = reserved - ?, used = used + ?
          WHERE account_id = ? AND period = ?`).run(credits, c.status === 'ready' ? credits : 0, String(row.account_id), String(row.period));
        if (event) insertEvent(db, event);
        return true;
      });
    },

    async countActiveJobs() {
      const rows = db.prepare(`SELECT status, COUNT(*) AS n FROM jobs WHERE status IN ('queued', 'processing') GROUP BY status`).all() as Row[];
      const count = (s: string) => Number(rows.find((r) => r.status === s)?.n ?? 0);
      return { queued: count('queued'), processing: count('processing') };
    },

    async creditBalance(accountId, period) {
      return balance(accountId, period);
    },
  };
}
