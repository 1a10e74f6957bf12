// A sandbox clock move that commits while a webhook claim waits for it, on PostgreSQL
// (the embedded store runs one transaction at a time, so its claim never waits). The
// claim hands the sender the account's clock as the attempt starts, and the retry is
// recorded against it (RetryAt): a claim that handed over the clock from before a move
// it had waited for made the retry count that move once more, coming early by as much.
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { createAccount } from '../../src/domain/accounts.ts';
import type { Job } from '../../src/domain/model.ts';
import type { Store } from '../../src/domain/ports.ts';
import { destinationOf } from '../../src/domain/webhookDestinations.ts';
import { openStore } from '../../src/runtime.ts';
import { fakeClock } from '../support/clock.ts';
import { createTestStoreEnv, type TestStoreEnv } from '../support/stores.ts';

const FAIR = { perDestination: 2, circuitFailures: 3 };
const MOVE_MS = 3_600_000;

let storeEnv: TestStoreEnv;
let store: Store;
let mover: pg.Client;
const clock = fakeClock();

beforeEach(async () => {
  storeEnv = await createTestStoreEnv();
  store = await openStore(loadConfig(storeEnv.env), { serving: false });
  mover = new pg.Client({ connectionString: storeEnv.env.DATABASE_URL });
  await mover.connect();
});
afterEach(async () => {
  await mover.end();
  await store.close();
  await storeEnv.drop();
});

/** A pending event due at `dueAt` (service time) of a new account. */
async function pendingEvent(dueAt: number): Promise<{ accountId: string; eventId: string }> {
  const { account_id: accountId } = await createAccount(store, clock, { monthlyCredits: 100 });
  const job: Job = {
    id: 'av_race', kind: 'avatar', accountId, keyId: 'key_x', sandbox: true, status: 'queued', input: { type: 'prompt', name: 'x', prompt: 'y' },
    webhookUrl: 'https://h.example/hook', credits: 10, period: '2026-11', error: null, result: null, createdAt: 0, updatedAt: 0, completedAt: null, attempts: 0,
  };
  await store.jobs.createJobReservingCredits(job, 0);
  const event = {
    id: 'evt_race', type: 'avatar.ready', jobId: job.id, accountId, url: job.webhookUrl!, destination: destinationOf(job.webhookUrl!), payload: '{}',
    status: 'pending' as const, attempts: 0, nextAttemptAt: dueAt, lastError: null, createdAt: 0, deliveredAt: null, replay: false,
  };
  await store.jobs.completeJob(job.id, { status: 'ready', error: null, result: {}, at: dueAt }, event);
  return { accountId, eventId: event.id };
}

/** Resolves once a statement waits for the open move (the claim: other tests share the server, so only the move's own waiters count). */
async function someoneWaitsForTheMove(): Promise<void> {
  for (;;) {
    const r = await mover.query('SELECT count(*)::int AS n FROM pg_stat_activity WHERE pg_backend_pid() = ANY(pg_blocking_pids(pid))');
    if (r.rows[0].n > 0) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('a clock move that commits while a webhook claim waits for it', () => {
  it('is in the clock the claim hands over, so the retry does not count it again', async () => {
    const { accountId, eventId } = await pendingEvent(1000);
    // The move, held open between its changes and its commit: what advanceClock does.
    await mover.query('BEGIN');
    await mover.query('SELECT clock_offset_ms FROM accounts WHERE id = $1 FOR UPDATE', [accountId]);
    await mover.query('UPDATE accounts SET clock_offset_ms = clock_offset_ms + $1 WHERE id = $2', [MOVE_MS, accountId]);
    await mover.query("UPDATE webhook_events SET next_attempt_at = next_attempt_at - $1 WHERE account_id = $2 AND status = 'pending' AND lease_until IS NULL", [MOVE_MS, accountId]);

    const claiming = store.outbox.claimDueEvents(5000, 10, 30_000, FAIR);
    await someoneWaitsForTheMove();
    await mover.query('COMMIT');
    const [claimed] = await claiming;
    // The attempt fails at once; its retry is due 5 s after it on the service's time.
    await store.outbox.scheduleRetry(eventId, 1, { at: 10_000, clockOffsetMs: claimed!.sender!.clockOffsetMs }, { trigger: 'scheduled', startedAt: 5000, durationMs: 1, statusCode: 500, error: 'status 500' }, 'down');

    expect(claimed?.id).toBe(eventId);
    expect(claimed?.sender?.clockOffsetMs).toBe(MOVE_MS);
    expect((await store.outbox.getEvent(eventId))?.nextAttemptAt).toBe(10_000);
  });
});
