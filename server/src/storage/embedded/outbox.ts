import { HEAD_SCAN, fullDestinations, headScanFellShort, pickFairly, type DestinationHealth, type DestinationLoad } from '../../domain/webhookDestinations.ts';
import type { AttemptLog } from '../../domain/model.ts';
import { MAX_KEPT_ATTEMPTS } from '../../domain/webhookLog.ts';
import type { WebhookOutbox } from '../../domain/ports.ts';
import { newestFirstPage, transaction, type Db, type PageCondition } from './database.ts';
import { numOrNull, rowsToAttempts, rowToClaimed, rowToEvent, type Row } from '../rows.ts';

export function embeddedOutbox(db: Db): WebhookOutbox {
  // Through the index of leases: the attempts in flight are few, the pending events many
  // (left to itself, SQLite groups by walking the destination index over all of them).
  const inFlight = db.prepare(`
    SELECT destination, COUNT(*) AS n FROM webhook_events INDEXED BY webhook_events_leased
    WHERE status = 'pending' AND lease_until IS NOT NULL AND lease_until >= ? GROUP BY destination`);
  const failuresOf = db.prepare('SELECT destination, failures FROM webhook_destinations WHERE destination IN (SELECT value FROM json_each(?))');
  const dueHead = db.prepare(`
    SELECT id, destination, next_attempt_at AS at FROM webhook_events
    WHERE status = 'pending' AND next_attempt_at <= ? AND (lease_until IS NULL OR lease_until < ?)
    ORDER BY next_attempt_at LIMIT ?`);
  // Every destination with pending events, one index seek each (a loose index scan).
  const pendingDestinations = db.prepare(`
    WITH RECURSIVE d(name) AS (
      SELECT MIN(destination) FROM webhook_events WHERE status = 'pending'
      UNION ALL
      SELECT (SELECT MIN(destination) FROM webhook_events WHERE status = 'pending' AND destination > d.name) FROM d WHERE d.name IS NOT NULL)
    SELECT name FROM d WHERE name IS NOT NULL`);
  const dueOf = db.prepare(`
    SELECT id, destination, next_attempt_at AS at FROM webhook_events
    WHERE status = 'pending' AND destination = ? AND next_attempt_at <= ? AND (lease_until IS NULL OR lease_until < ?)
    ORDER BY next_attempt_at LIMIT ?`);
  // Claimed events with their accounts' signing secrets and clocks: the sender needs no other read.
  const claimedByIds = db.prepare(
    `SELECT e.*, a.signing_secret, a.clock_offset_ms, a.standard_webhooks FROM webhook_events e LEFT JOIN accounts a ON a.id = e.account_id
     WHERE e.id IN (SELECT value FROM json_each(?)) ORDER BY e.next_attempt_at`,
  );
  const nextAfter = db.prepare(`SELECT MIN(next_attempt_at) AS at FROM webhook_events WHERE status = 'pending' AND next_attempt_at > ?`);
  const lease = db.prepare('UPDATE webhook_events SET lease_until = ? WHERE id = ?');
  const failed = db.prepare(`
    INSERT INTO webhook_destinations (destination, failures) SELECT destination, 1 FROM webhook_events WHERE id = ?
    ON CONFLICT (destination) DO UPDATE SET failures = failures + 1
    RETURNING failures`);
  const cleared = db.prepare('DELETE FROM webhook_destinations WHERE destination = (SELECT destination FROM webhook_events WHERE id = ?)');
  const current = db.prepare('SELECT failures FROM webhook_destinations WHERE destination = (SELECT destination FROM webhook_events WHERE id = ?)');
  /** Applies what an attempt said of its destination; its failures in a row afterwards. */
  const judge = (id: string, health: DestinationHealth): number => {
    if (health === 'down') return Number((failed.get(id) as Row | undefined)?.failures ?? 0);
    if (health === 'up') cleared.run(id);
    return Number((current.get(id) as Row | undefined)?.failures ?? 0);
  };
  const forgetIfIdle = db.prepare(`
    DELETE FROM webhook_destinations WHERE destination = (SELECT destination FROM webhook_events WHERE id = ?)
      AND NOT EXISTS (SELECT 1 FROM webhook_events e WHERE e.destination = webhook_destinations.destination AND e.status = 'pending')`);

  /** The attempts in flight, with the failures in a row of those destinations. */
  function load(now: number): DestinationLoad & { failures: Map<string, number> } {
    const busy = new Map((inFlight.all(now) as Row[]).map((r) => [String(r.destination), Number(r.n)]));
    const failures = new Map<string, number>();
    addFailures(failures, busy.keys());
    return { inFlight: busy, failures };
  }

  /** Adds the failures in a row of `names` not read yet to `failures`. */
  function addFailures(failures: Map<string, number>, names: Iterable<string>): void {
    const unread = [...new Set(names)].filter((d) => !failures.has(d));
    if (unread.length === 0) return;
    for (const r of failuresOf.all(JSON.stringify(unread)) as Row[]) failures.set(String(r.destination), Number(r.failures));
  }

  const delivered = db.prepare(`UPDATE webhook_events SET status = 'delivered', delivered_at = ?, attempts = ?, lease_until = NULL, replay = 0 WHERE id = ?`);
  const logged = db.prepare('INSERT INTO webhook_attempts (event_id, number, trigger, started_at, duration_ms, status_code, error, standard_webhooks) VALUES (?, ?, ?, ?, ?, ?, ?, ?)');
  const pruned = db.prepare('DELETE FROM webhook_attempts WHERE event_id = ? AND number <= ?');
  /**
   * Writes the event's `number`th attempt to the delivery log, and deletes those older than
   * its latest MAX_KEPT_ATTEMPTS; called inside the transaction that records its outcome.
   */
  const log = (id: string, number: number, a: AttemptLog) => {
    logged.run(id, number, a.trigger, a.startedAt, a.durationMs, a.statusCode, a.error, a.standardWebhooks ? 1 : 0);
    if (number > MAX_KEPT_ATTEMPTS) pruned.run(id, number - MAX_KEPT_ATTEMPTS);
  };
  // Only an event at rest is made pending: a pending one has an attempt due or in flight.
  const replayed = db.prepare(`
    UPDATE webhook_events SET status = 'pending', next_attempt_at = ?, replay = 1, lease_until = NULL
    WHERE id = ? AND account_id = ? AND status IN ('delivered', 'failed') RETURNING *`);
  const ownEvent = db.prepare('SELECT * FROM webhook_events WHERE id = ? AND account_id = ?');
  return {
    async claimDueEvents(now, limit, leaseUntil, fairness) {
      return transaction(db, () => {
        const known = load(now);
        const full = fullDestinations(known, fairness);
        const due = (rows: Row[]) => rows.map((r) => ({ id: String(r.id), destination: String(r.destination), at: Number(r.at) }));
        let picked: { id: string; destination: string }[] = [];
        let byDestination = full.length > 0;
        if (!byDestination) {
          const asked = limit * HEAD_SCAN;
          const head = due(dueHead.all(now, now, asked) as Row[]);
          addFailures(known.failures, head.map((e) => e.destination));
          picked = pickFairly(head, known, fairness, limit);
          byDestination = headScanFellShort(picked.length, limit, head.length, asked);
        }
        if (byDestination) {
          const names = (pendingDestinations.all() as Row[]).map((r) => String(r.name)).filter((d) => !full.includes(d));
          const heads = names.flatMap((d) => due(dueOf.all(d, now, now, fairness.perDestination) as Row[])).sort((a, b) => a.at - b.at);
          addFailures(known.failures, heads.map((e) => e.destination));
          picked = pickFairly(heads, known, fairness, limit);
        }
        for (const { id } of picked) lease.run(leaseUntil, id);
        return picked.length === 0 ? [] : (claimedByIds.all(JSON.stringify(picked.map((e) => e.id))) as Row[]).map(rowToClaimed);
      });
    },
    async markDelivered(deliveries) {
      transaction(db, () => {
        for (const { eventId, at, attempts, attempt } of deliveries) {
          delivered.run(at, attempts, eventId);
          log(eventId, attempts, attempt);
          cleared.run(eventId);
        }
      });
    },
    async scheduleRetry(id, attempts, retry, attempt, health) {
      return transaction(db, () => {
        log(id, attempts, attempt);
        const account = db.prepare('SELECT a.clock_offset_ms FROM webhook_events e JOIN accounts a ON a.id = e.account_id WHERE e.id = ?').get(id) as Row | undefined;
        const movedSince = account ? Number(account.clock_offset_ms) - retry.clockOffsetMs : 0;
        db.prepare('UPDATE webhook_events SET attempts = ?, next_attempt_at = ?, last_error = ?, lease_until = NULL WHERE id = ?').run(attempts, retry.at - movedSince, attempt.error, id);
        return judge(id, health);
      });
    },
    async markFailed(id, attempts, attempt, health) {
      return transaction(db, () => {
        db.prepare(`UPDATE webhook_events SET status = 'failed', attempts = ?, last_error = ?, lease_until = NULL, replay = 0 WHERE id = ?`).run(attempts, attempt.error, id);
        log(id, attempts, attempt);
        const failures = judge(id, health);
        // A destination with nothing left to send starts afresh with its next event.
        forgetIfIdle.run(id);
        return failures;
      });
    },
    async getEvent(id) {
      const row = db.prepare('SELECT * FROM webhook_events WHERE id = ?').get(id) as Row | undefined;
      return row ? rowToEvent(row) : null;
    },
    async listEvents({ accountId, limit, after, jobId, status }) {
      const conditions: PageCondition[] = [['account_id', accountId], ['job_id', jobId], ['status', status]];
      return newestFirstPage(db, 'webhook_events', conditions, after, limit).map(rowToEvent);
    },
    async attemptsOf(eventIds) {
      if (eventIds.length === 0) return [];
      const rows = db.prepare('SELECT * FROM webhook_attempts WHERE event_id IN (SELECT value FROM json_each(?)) ORDER BY event_id, id').all(JSON.stringify(eventIds)) as Row[];
      return rowsToAttempts(rows);
    },
    async requestReplay(accountId, id, now) {
      return transaction(db, () => {
        const row = replayed.get(now, id, accountId) as Row | undefined;
        if (row) return { ok: true as const, event: rowToEvent(row) };
        const found = ownEvent.get(id, accountId) as Row | undefined;
        return found ? { ok: false as const, reason: 'pending' as const, event: rowToEvent(found) } : { ok: false as const, reason: 'not_found' as const };
      });
    },
    async nextDueAfter(now) {
      return numOrNull((nextAfter.get(now) as Row).at); // one seek on the due-time index
    },
    async countPending() {
      return Number((db.prepare(`SELECT COUNT(*) AS n FROM webhook_events WHERE status = 'pending'`).get() as Row).n);
    },
  };
}
