import type pg from 'pg';
import { HEAD_SCAN, fullDestinations, headScanFellShort, pickFairly, type DestinationHealth, type DestinationLoad } from '../../domain/webhookDestinations.ts';
import type { AttemptLog } from '../../domain/model.ts';
import { MAX_KEPT_ATTEMPTS } from '../../domain/webhookLog.ts';
import type { WebhookOutbox } from '../../domain/ports.ts';
import { num, numOrNull, rowsToAttempts, rowToClaimed, rowToEvent } from '../rows.ts';
import { guarded, newestFirstPage, transaction, type PageCondition, type Row } from './database.ts';

type Queryable = Pick<pg.Pool, 'query'> | pg.PoolClient;

/**
 * Names the lock that makes claims, on every sender, one at a time. Advisory locks are
 * shared by the whole database, so the name includes the schema: services in other
 * schemas of the same database do not wait for each other.
 */
const CLAIM_LOCK = `SELECT pg_advisory_xact_lock(hashtext(current_schema() || '.webhook_claims'))`;

/**
 * Writes the event's `number`th attempt to the delivery log, and deletes those older than
 * its latest MAX_KEPT_ATTEMPTS; called inside the transaction that records its outcome.
 */
async function log(client: pg.PoolClient, id: string, number: number, a: AttemptLog): Promise<void> {
  await client.query('INSERT INTO webhook_attempts (event_id, number, trigger, started_at, duration_ms, status_code, error, standard_webhooks) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)', [
    id,
    number,
    a.trigger,
    a.startedAt,
    a.durationMs,
    a.statusCode,
    a.error,
    a.standardWebhooks === true,
  ]);
  if (number > MAX_KEPT_ATTEMPTS) await client.query('DELETE FROM webhook_attempts WHERE event_id = $1 AND number <= $2', [id, number - MAX_KEPT_ATTEMPTS]);
}

export function postgresOutbox(pool: pg.Pool): WebhookOutbox {
  const q = (text: string, values: unknown[] = []) => guarded(() => pool.query(text, values));

  /** The attempts in flight by destination, with the failures in a row of those destinations, in one query. */
  async function loadDestinations(db: Queryable, now: number): Promise<DestinationLoad & { failures: Map<string, number> }> {
    const r = await db.query(
      // Counted through the leases' index one entry at a time (migration 14).
      `SELECT b.destination, b.n, d.failures FROM webhook_attempts_in_flight($1::bigint) b
       LEFT JOIN webhook_destinations d ON d.destination = b.destination`,
      [now],
    );
    const inFlight = new Map<string, number>(r.rows.map((row: Row) => [String(row.destination), num(row.n)]));
    const failures = new Map<string, number>(r.rows.filter((row: Row) => row.failures !== null).map((row: Row) => [String(row.destination), num(row.failures)]));
    return { inFlight, failures };
  }

  /** Due events as a claim weighs them; the failures in a row joined to each row go into `load`. */
  function candidates(rows: Row[], load: { failures: Map<string, number> }) {
    for (const r of rows) if (r.failures !== null) load.failures.set(String(r.destination), num(r.failures));
    return rows.map((r) => ({ id: String(r.id), destination: String(r.destination) }));
  }

  /** Records a failed attempt and applies what it said of its destination; its failures in a row afterwards. */
  async function recordFailure(record: (client: pg.PoolClient) => Promise<unknown>, id: string, health: DestinationHealth): Promise<number> {
    return transaction(pool, async (client) => {
      await record(client);
      if (health === 'down') {
        const r = await client.query(
          `INSERT INTO webhook_destinations (destination, failures) SELECT destination, 1 FROM webhook_events WHERE id = $1
           ON CONFLICT (destination) DO UPDATE SET failures = webhook_destinations.failures + 1
           RETURNING failures`,
          [id],
        );
        return r.rows[0] ? num(r.rows[0].failures) : 0;
      }
      if (health === 'up') await client.query('DELETE FROM webhook_destinations WHERE destination = (SELECT destination FROM webhook_events WHERE id = $1)', [id]);
      const r = await client.query('SELECT failures FROM webhook_destinations WHERE destination = (SELECT destination FROM webhook_events WHERE id = $1)', [id]);
      return r.rows[0] ? num(r.rows[0].failures) : 0;
    });
  }

  return {
    async claimDueEvents(now, limit, leaseUntil, fairness) {
      // Counting the attempts in flight and leasing more must not interleave between
      // senders, or two of them could each fill the same destination's last slot: the
      // transaction takes the claim lock as it begins.
      return transaction(pool, async (client) => {
        const load = await loadDestinations(client, now);
        const full = fullDestinations(load, fairness);
        let picked: { id: string; destination: string }[] = [];
        let byDestination = full.length > 0;
        if (!byDestination) {
          const asked = limit * HEAD_SCAN;
          // The queue's head in its index's order, whatever the statistics say (migration 14).
          const head = await client.query(
            `SELECT e.id, e.destination, f.failures FROM due_webhook_events($1::bigint, $2::integer) e
             LEFT JOIN webhook_destinations f ON f.destination = e.destination
             ORDER BY e.next_attempt_at`,
            [now, asked],
          );
          picked = pickFairly(candidates(head.rows, load), load, fairness, limit);
          byDestination = headScanFellShort(picked.length, limit, head.rows.length, asked);
        }
        if (byDestination) {
          // Every destination with pending events, one index seek each (a loose index
          // scan), and the oldest due events of each that is not full.
          const heads = await client.query(
            `WITH RECURSIVE d(name) AS (
               SELECT MIN(destination) FROM webhook_events WHERE status = 'pending'
               UNION ALL
               SELECT (SELECT MIN(destination) FROM webhook_events WHERE status = 'pending' AND destination > d.name) FROM d WHERE d.name IS NOT NULL)
             SELECT e.id, e.destination, f.failures
             FROM d CROSS JOIN LATERAL (
               SELECT id, destination, next_attempt_at FROM webhook_events
               WHERE status = 'pending' AND destination = d.name AND next_attempt_at <= $1 AND (lease_until IS NULL OR lease_until < $1)
               ORDER BY next_attempt_at LIMIT $3) e
             LEFT JOIN webhook_destinations f ON f.destination = e.destination
             WHERE d.name IS NOT NULL AND d.name <> ALL($2::text[])
             ORDER BY e.next_attempt_at`,
            [now, full, fairness.perDestination],
          );
          picked = pickFairly(candidates(heads.rows, load), load, fairness, limit);
        }
        if (picked.length === 0) return [];
        // Their accounts first, locked as advanceClock and scheduleRetry lock them (and in
        // that order, accounts then events): a move that commits while this claim waits is
        // in the clock handed over below, whose statement starts after it; one that starts
        // later waits for this claim and leaves its leased events to their retries
        // (RetryAt). Without it, the lease could wait for a move's events and still join
        // the clock from before it, and the retry would count that move again.
        await client.query('SELECT 1 FROM accounts WHERE id IN (SELECT account_id FROM webhook_events WHERE id = ANY($1::text[])) ORDER BY id FOR SHARE', [picked.map((e) => e.id)]);
        // Leased with their accounts' signing secrets and clocks: the sender needs no other read.
        const leased = await client.query(
          `WITH leased AS (UPDATE webhook_events SET lease_until = $1 WHERE id = ANY($2::text[]) RETURNING *)
           SELECT l.*, a.signing_secret, a.clock_offset_ms, a.standard_webhooks FROM leased l LEFT JOIN accounts a ON a.id = l.account_id
           ORDER BY l.next_attempt_at`,
          [leaseUntil, picked.map((e) => e.id)],
        );
        return leased.rows.map(rowToClaimed);
      }, CLAIM_LOCK);
    },
    async markDelivered(deliveries) {
      if (deliveries.length === 0) return;
      // One statement: the outcomes, their attempts in the log, and the destinations cleared.
      await q(
        `WITH done AS (
           UPDATE webhook_events e SET status = 'delivered', delivered_at = d.at, attempts = d.attempts, lease_until = NULL, replay = false
           FROM unnest($1::text[], $2::bigint[], $3::int[]) AS d(id, at, attempts)
           WHERE e.id = d.id RETURNING e.destination),
         logged AS (
           INSERT INTO webhook_attempts (event_id, number, trigger, started_at, duration_ms, status_code, error, standard_webhooks)
           SELECT event_id, number, trigger, started_at, duration_ms, status_code, error, standard_webhooks
           FROM unnest($1::text[], $3::int[], $4::text[], $5::bigint[], $6::int[], $7::int[], $8::text[], $9::boolean[]) WITH ORDINALITY AS a(event_id, number, trigger, started_at, duration_ms, status_code, error, standard_webhooks, n)
           ORDER BY n),
         -- The log keeps each event's latest attempts (MAX_KEPT_ATTEMPTS); the one written
         -- here is numbered past those deleted, so it is never among them.
         pruned AS (
           DELETE FROM webhook_attempts w USING unnest($1::text[], $3::int[]) AS p(event_id, number)
           WHERE p.number > $10 AND w.event_id = p.event_id AND w.number <= p.number - $10)
         DELETE FROM webhook_destinations WHERE destination IN (SELECT destination FROM done)`,
        [
          deliveries.map((d) => d.eventId),
          deliveries.map((d) => d.at),
          deliveries.map((d) => d.attempts),
          deliveries.map((d) => d.attempt.trigger),
          deliveries.map((d) => d.attempt.startedAt),
          deliveries.map((d) => d.attempt.durationMs),
          deliveries.map((d) => d.attempt.statusCode),
          deliveries.map((d) => d.attempt.error),
          deliveries.map((d) => d.attempt.standardWebhooks === true),
          MAX_KEPT_ATTEMPTS,
        ],
      );
    },
    async scheduleRetry(id, attempts, retry, attempt, health) {
      return recordFailure(async (client) => {
        await log(client, id, attempts, attempt);
        // Locked as advanceClock locks it: a move commits before this read (and is taken
        // off here) or after this transaction (and moves this event with the others).
        const account = await client.query('SELECT clock_offset_ms FROM accounts WHERE id = (SELECT account_id FROM webhook_events WHERE id = $1) FOR SHARE', [id]);
        const movedSince = account.rows[0] ? num(account.rows[0].clock_offset_ms) - retry.clockOffsetMs : 0;
        await client.query('UPDATE webhook_events SET attempts = $1, next_attempt_at = $2, last_error = $3, lease_until = NULL WHERE id = $4', [attempts, retry.at - movedSince, attempt.error, id]);
      }, id, health);
    },
    async markFailed(id, attempts, attempt, health) {
      const failures = await recordFailure(
        async (client) => {
          await client.query(`UPDATE webhook_events SET status = 'failed', attempts = $1, last_error = $2, lease_until = NULL, replay = false WHERE id = $3`, [attempts, attempt.error, id]);
          await log(client, id, attempts, attempt);
        },
        id,
        health,
      );
      // A destination with nothing left to send starts afresh with its next event.
      await q(
        `DELETE FROM webhook_destinations d WHERE d.destination = (SELECT destination FROM webhook_events WHERE id = $1)
           AND NOT EXISTS (SELECT 1 FROM webhook_events e WHERE e.destination = d.destination AND e.status = 'pending')`,
        [id],
      );
      return failures;
    },
    async getEvent(id) {
      const r = await q('SELECT * FROM webhook_events WHERE id = $1', [id]);
      return r.rows[0] ? rowToEvent(r.rows[0]) : null;
    },
    async listEvents({ accountId, limit, after, jobId, status }) {
      const conditions: PageCondition[] = [['account_id', accountId], ['job_id', jobId], ['status', status]];
      return (await newestFirstPage(pool, 'webhook_events', '*', conditions, after, limit)).map(rowToEvent);
    },
    async attemptsOf(eventIds) {
      if (eventIds.length === 0) return [];
      const r = await q('SELECT * FROM webhook_attempts WHERE event_id = ANY($1::text[]) ORDER BY event_id, id', [eventIds]);
      return rowsToAttempts(r.rows);
    },
    async requestReplay(accountId, id, now) {
      // One conditional update: of two replays at once, the second finds the event pending.
      const r = await q(
        `UPDATE webhook_events SET status = 'pending', next_attempt_at = $1, replay = true, lease_until = NULL
         WHERE id = $2 AND account_id = $3 AND status IN ('delivered', 'failed') RETURNING *`,
        [now, id, accountId],
      );
      if (r.rows[0]) return { ok: true, event: rowToEvent(r.rows[0]) };
      const found = await q('SELECT * FROM webhook_events WHERE id = $1 AND account_id = $2', [id, accountId]);
      return found.rows[0] ? { ok: false, reason: 'pending', event: rowToEvent(found.rows[0]) } : { ok: false, reason: 'not_found' };
    },
    async nextDueAfter(now) {
      const r = await q(`SELECT MIN(next_attempt_at) AS at FROM webhook_events WHERE status = 'pending' AND next_attempt_at > $1`, [now]);
      return numOrNull(r.rows[0].at); // one seek on the due-time index
    },
    async countPending() {
      return num((await q(`SELECT COUNT(*) AS n FROM webhook_events WHERE status = 'pending'`)).rows[0].n);
    },
  };
}
