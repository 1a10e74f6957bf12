import type { WebhookEvent } from '../../domain/model.ts';
import type { WebhookOutbox } from '../ports.ts';
import { numOrNull, transaction, type Db, type Row } from './database.ts';

function toEvent(row: Row): WebhookEvent {
  return {
    id: String(row.id),
    type: String(row.type),
    jobId: String(row.job_id),
    accountId: String(row.account_id),
    url: String(row.url),
    payload: String(row.payload),
    status: row.status as WebhookEvent['status'],
    attempts: Number(row.attempts),
    nextAttemptAt: Number(row.next_attempt_at),
    lastError: row.last_error === null ? null : String(row.last_error),
    createdAt: Number(row.created_at),
    deliveredAt: numOrNull(row.delivered_at),
  };
}

export function embeddedOutbox(db: Db): WebhookOutbox {
  return {
    async claimDueEvents(now, limit, leaseUntil) {
      return transaction(db, () => {
        const rows = db.prepare(`
          SELECT * FROM webhook_events
          WHERE status = 'pending' AND next_attempt_at <= ? AND (lease_until IS NULL OR lease_until < ?)
          ORDER BY next_attempt_at LIMIT ?`).all(now, now, limit) as Row[];
        const lease = db.prepare('UPDATE webhook_events SET lease_until = ? WHERE id = ?');
        for (const row of rows) lease.run(leaseUntil, String(row.id));
        return rows.map(toEvent);
      });
    },
    async markDelivered(id, at, attempts) {
      db.prepare(`UPDATE webhook_events SET status = 'delivered', delivered_at = ?, attempts = ?, lease_until = NULL WHERE id = ?`).run(at, attempts, id);
    },
    async scheduleRetry(id, attempts, nextAttemptAt, error) {
      db.prepare('UPDATE webhook_events SET attempts = ?, next_attempt_at = ?, last_error = ?, lease_until = NULL WHERE id = ?').run(attempts, nextAttemptAt, error, id);
    },
    async markFailed(id, attempts, error) {
      db.prepare(`UPDATE webhook_events SET status = 'failed', attempts = ?, last_error = ?, lease_until = NULL WHERE id = ?`).run(attempts, error, id);
    },
    async getEvent(id) {
      const row = db.prepare('SELECT * FROM webhook_events WHERE id = ?').get(id) as Row | undefined;
      return row ? toEvent(row) : null;
    },
    async nextDueAt() {
      const row = db.prepare(`SELECT MIN(next_attempt_at) AS at FROM webhook_events WHERE status = 'pending'`).get() as Row;
      return numOrNull(row.at);
    },
    async countPending() {
      return Number((db.prepare(`SELECT COUNT(*) AS n FROM webhook_events WHERE status = 'pending'`).get() as Row).n);
    },
  };
}
