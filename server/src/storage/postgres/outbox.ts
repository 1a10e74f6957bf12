import type pg from 'pg';
import type { WebhookOutbox } from '../ports.ts';
import { guarded, num, numOrNull } from './database.ts';
import { rowToEvent } from '../rows.ts';

export function postgresOutbox(pool: pg.Pool): WebhookOutbox {
  const q = (text: string, values: unknown[] = []) => guarded(() => pool.query(text, values));
  return {
    async claimDueEvents(now, limit, leaseUntil) {
      const r = await q(
        `UPDATE webhook_events SET lease_until = $3
         WHERE id IN (
           SELECT id FROM webhook_events
           WHERE status = 'pending' AND next_attempt_at <= $1 AND (lease_until IS NULL OR lease_until < $1)
           ORDER BY next_attempt_at LIMIT $2
           FOR UPDATE SKIP LOCKED)
         RETURNING *`,
        [now, limit, leaseUntil],
      );
      return r.rows.map(rowToEvent).sort((a, b) => a.nextAttemptAt - b.nextAttemptAt);
    },
    async markDelivered(id, at, attempts) {
      await q(`UPDATE webhook_events SET status = 'delivered', delivered_at = $1, attempts = $2, lease_until = NULL WHERE id = $3`, [at, attempts, id]);
    },
    async scheduleRetry(id, attempts, nextAttemptAt, error) {
      await q('UPDATE webhook_events SET attempts = $1, next_attempt_at = $2, last_error = $3, lease_until = NULL WHERE id = $4', [attempts, nextAttemptAt, error, id]);
    },
    async markFailed(id, attempts, error) {
      await q(`UPDATE webhook_events SET status = 'failed', attempts = $1, last_error = $2, lease_until = NULL WHERE id = $3`, [attempts, error, id]);
    },
    async getEvent(id) {
      const r = await q('SELECT * FROM webhook_events WHERE id = $1', [id]);
      return r.rows[0] ? rowToEvent(r.rows[0]) : null;
    },
    async nextDueAt(now) {
      // Walks the due-time index and steps over the few events held by attempts.
      const r = await q(
        `SELECT next_attempt_at AS at FROM webhook_events
         WHERE status = 'pending' AND (lease_until IS NULL OR lease_until < $1)
         ORDER BY next_attempt_at LIMIT 1`,
        [now],
      );
      return r.rows[0] ? numOrNull(r.rows[0].at) : null;
    },
    async countPending() {
      return num((await q(`SELECT COUNT(*) AS n FROM webhook_events WHERE status = 'pending'`)).rows[0].n);
    },
  };
}
