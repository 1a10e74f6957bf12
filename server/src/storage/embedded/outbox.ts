import { CLAIM_SCAN, fullDestinations, pickFairly, type DestinationLoad } from '../../domain/webhookDestinations.ts';
import type { WebhookOutbox } from '../ports.ts';
import { numOrNull, transaction, type Db } from './database.ts';
import { rowToEvent, type Row } from '../rows.ts';

export function embeddedOutbox(db: Db): WebhookOutbox {
  const inFlight = db.prepare(`
    SELECT destination, COUNT(*) AS n FROM webhook_events
    WHERE status = 'pending' AND lease_until >= ? GROUP BY destination`);
  const failuresOf = db.prepare('SELECT destination, failures FROM webhook_destinations WHERE destination IN (SELECT value FROM json_each(?))');
  const dueOutside = db.prepare(`
    SELECT * FROM webhook_events
    WHERE status = 'pending' AND next_attempt_at <= ? AND (lease_until IS NULL OR lease_until < ?)
      AND destination NOT IN (SELECT value FROM json_each(?))
    ORDER BY next_attempt_at LIMIT ?`);
  const nextOutside = db.prepare(`
    SELECT next_attempt_at AS at FROM webhook_events
    WHERE status = 'pending' AND (lease_until IS NULL OR lease_until < ?) AND destination NOT IN (SELECT value FROM json_each(?))
    ORDER BY next_attempt_at LIMIT 1`);
  const lease = db.prepare('UPDATE webhook_events SET lease_until = ? WHERE id = ?');
  const failed = db.prepare(`
    INSERT INTO webhook_destinations (destination, failures) SELECT destination, 1 FROM webhook_events WHERE id = ?
    ON CONFLICT (destination) DO UPDATE SET failures = failures + 1
    RETURNING failures`);
  const forgetIfIdle = db.prepare(`
    DELETE FROM webhook_destinations WHERE destination = (SELECT destination FROM webhook_events WHERE id = ?)
      AND NOT EXISTS (SELECT 1 FROM webhook_events e WHERE e.destination = webhook_destinations.destination AND e.status = 'pending')`);

  function load(now: number, more: Iterable<string> = []): DestinationLoad {
    const busy = new Map((inFlight.all(now) as Row[]).map((r) => [String(r.destination), Number(r.n)]));
    const names = JSON.stringify([...new Set([...busy.keys(), ...more])]);
    const failures = new Map((failuresOf.all(names) as Row[]).map((r) => [String(r.destination), Number(r.failures)]));
    return { inFlight: busy, failures };
  }

  return {
    async claimDueEvents(now, limit, leaseUntil, fairness) {
      return transaction(db, () => {
        const before = load(now);
        const full = JSON.stringify(fullDestinations(before, fairness));
        const due = (dueOutside.all(now, now, full, Math.max(limit, CLAIM_SCAN)) as Row[]).map(rowToEvent);
        const picked = pickFairly(due, load(now, due.map((e) => e.destination)), fairness, limit);
        for (const event of picked) lease.run(leaseUntil, event.id);
        return picked;
      });
    },
    async markDelivered(id, at, attempts) {
      transaction(db, () => {
        db.prepare(`UPDATE webhook_events SET status = 'delivered', delivered_at = ?, attempts = ?, lease_until = NULL WHERE id = ?`).run(at, attempts, id);
        db.prepare('DELETE FROM webhook_destinations WHERE destination = (SELECT destination FROM webhook_events WHERE id = ?)').run(id);
      });
    },
    async scheduleRetry(id, attempts, nextAttemptAt, error) {
      return transaction(db, () => {
        db.prepare('UPDATE webhook_events SET attempts = ?, next_attempt_at = ?, last_error = ?, lease_until = NULL WHERE id = ?').run(attempts, nextAttemptAt, error, id);
        return Number((failed.get(id) as Row | undefined)?.failures ?? 0);
      });
    },
    async markFailed(id, attempts, error) {
      return transaction(db, () => {
        db.prepare(`UPDATE webhook_events SET status = 'failed', attempts = ?, last_error = ?, lease_until = NULL WHERE id = ?`).run(attempts, error, id);
        const failures = Number((failed.get(id) as Row | undefined)?.failures ?? 0);
        // A destination with nothing left to send starts afresh with its next event.
        forgetIfIdle.run(id);
        return failures;
      });
    },
    async getEvent(id) {
      const row = db.prepare('SELECT * FROM webhook_events WHERE id = ?').get(id) as Row | undefined;
      return row ? rowToEvent(row) : null;
    },
    async nextDueAt(now, fairness) {
      // Walks the due-time index and steps over the events held by attempts or waiting for room.
      const row = nextOutside.get(now, JSON.stringify(fullDestinations(load(now), fairness))) as Row | undefined;
      return row ? numOrNull(row.at) : null;
    },
    async countPending() {
      return Number((db.prepare(`SELECT COUNT(*) AS n FROM webhook_events WHERE status = 'pending'`).get() as Row).n);
    },
  };
}
