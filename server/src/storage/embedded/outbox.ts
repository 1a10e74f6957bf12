import type { WebhookOutbox } from '../ports.ts';
import { numOrNull, transaction, type Db } from './database.ts';
import { rowToEvent, type Row } from '../rows.ts';

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
        return rows.map(rowToEvent);
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
      return row ? rowToEvent(row) : null;
    },
    async nextDueAt(now) {
      // Walks the due-time index and steps over the few events held by attempts.
      const row = db.prepare(`
        SELECT next_attempt_at AS at FROM webhook_events
        WHERE status = 'pending' AND (lease_until IS NULL OR lease_until < ?)
        ORDER BY next_attempt_at LIMIT 1`).get(now) as Row | undefined;
      return row ? numOrNull(row.at) : null;
    },
    async countPending() {
      return Number((db.prepare(`SELECT COUNT(*) AS n FROM webhook_events WHERE status = 'pending'`).get() as Row).n);
    },
  };
}
