import type pg from 'pg';
import { CLAIM_SCAN, fullDestinations, pickFairly, type DestinationLoad } from '../../domain/webhookDestinations.ts';
import type { WebhookOutbox } from '../ports.ts';
import { rowToEvent } from '../rows.ts';
import { guarded, num, numOrNull, transaction, type Row } from './database.ts';

type Queryable = Pick<pg.Pool, 'query'> | pg.PoolClient;

/**
 * Names the lock that makes claims, on every sender, one at a time. Advisory locks are
 * shared by the whole database, so the name includes the schema: services in other
 * schemas of the same database do not wait for each other.
 */
const CLAIM_LOCK = `SELECT pg_advisory_xact_lock(hashtext(current_schema() || '.webhook_claims'))`;

export function postgresOutbox(pool: pg.Pool): WebhookOutbox {
  const q = (text: string, values: unknown[] = []) => guarded(() => pool.query(text, values));

  async function load(db: Queryable, now: number, more: Iterable<string> = []): Promise<DestinationLoad> {
    const busy = await db.query(
      `SELECT destination, COUNT(*) AS n FROM webhook_events WHERE status = 'pending' AND lease_until >= $1 GROUP BY destination`,
      [now],
    );
    const inFlight = new Map<string, number>(busy.rows.map((r: Row) => [String(r.destination), num(r.n)]));
    const names = [...new Set([...inFlight.keys(), ...more])];
    const f = await db.query('SELECT destination, failures FROM webhook_destinations WHERE destination = ANY($1::text[])', [names]);
    return { inFlight, failures: new Map(f.rows.map((r: Row) => [String(r.destination), num(r.failures)])) };
  }

  async function recordFailure(statement: string, values: unknown[], id: string): Promise<number> {
    return transaction(pool, async (client) => {
      await client.query(statement, values);
      const r = await client.query(
        `INSERT INTO webhook_destinations (destination, failures) SELECT destination, 1 FROM webhook_events WHERE id = $1
         ON CONFLICT (destination) DO UPDATE SET failures = webhook_destinations.failures + 1
         RETURNING failures`,
        [id],
      );
      return r.rows[0] ? num(r.rows[0].failures) : 0;
    });
  }

  return {
    async claimDueEvents(now, limit, leaseUntil, fairness) {
      return transaction(pool, async (client) => {
        // Counting the attempts in flight and leasing more must not interleave between
        // senders, or two of them could each fill the same destination's last slot.
        await client.query(CLAIM_LOCK);
        const before = await load(client, now);
        const due = await client.query(
          `SELECT * FROM webhook_events
           WHERE status = 'pending' AND next_attempt_at <= $1 AND (lease_until IS NULL OR lease_until < $1)
             AND destination <> ALL($2::text[])
           ORDER BY next_attempt_at LIMIT $3`,
          [now, fullDestinations(before, fairness), Math.max(limit, CLAIM_SCAN)],
        );
        const events = due.rows.map(rowToEvent);
        const picked = pickFairly(events, await load(client, now, events.map((e) => e.destination)), fairness, limit);
        if (picked.length > 0) await client.query('UPDATE webhook_events SET lease_until = $1 WHERE id = ANY($2::text[])', [leaseUntil, picked.map((e) => e.id)]);
        return picked;
      });
    },
    async markDelivered(id, at, attempts) {
      await q(
        `WITH done AS (
           UPDATE webhook_events SET status = 'delivered', delivered_at = $1, attempts = $2, lease_until = NULL WHERE id = $3 RETURNING destination)
         DELETE FROM webhook_destinations WHERE destination IN (SELECT destination FROM done)`,
        [at, attempts, id],
      );
    },
    async scheduleRetry(id, attempts, nextAttemptAt, error) {
      return recordFailure('UPDATE webhook_events SET attempts = $1, next_attempt_at = $2, last_error = $3, lease_until = NULL WHERE id = $4', [attempts, nextAttemptAt, error, id], id);
    },
    async markFailed(id, attempts, error) {
      const failures = await recordFailure(`UPDATE webhook_events SET status = 'failed', attempts = $1, last_error = $2, lease_until = NULL WHERE id = $3`, [attempts, error, id], id);
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
    async nextDueAt(now, fairness) {
      // Walks the due-time index and steps over the events held by attempts or waiting for room.
      const full = fullDestinations(await guarded(() => load(pool, now)), fairness);
      const r = await q(
        `SELECT next_attempt_at AS at FROM webhook_events
         WHERE status = 'pending' AND (lease_until IS NULL OR lease_until < $1) AND destination <> ALL($2::text[])
         ORDER BY next_attempt_at LIMIT 1`,
        [now, full],
      );
      return r.rows[0] ? numOrNull(r.rows[0].at) : null;
    },
    async countPending() {
      return num((await q(`SELECT COUNT(*) AS n FROM webhook_events WHERE status = 'pending'`)).rows[0].n);
    },
  };
}
