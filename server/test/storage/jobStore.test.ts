// The job store behind the port, on whichever adapter the project runs (embedded or
// PostgreSQL): one worker per job, leases that expire, the outbox in the same transaction.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { createAccount } from '../../src/domain/accounts.ts';
import type { Job } from '../../src/domain/model.ts';
import { openStore } from '../../src/runtime.ts';
import type { Store } from '../../src/storage/ports.ts';
import { fakeClock } from '../support/clock.ts';
import { createTestStoreEnv, type TestStoreEnv } from '../support/stores.ts';

let storeEnv: TestStoreEnv;
let store: Store;
const clock = fakeClock();

beforeEach(async () => {
  storeEnv = await createTestStoreEnv();
  store = await openStore(loadConfig(storeEnv.env), { serving: false });
});
afterEach(async () => {
  await store.close();
  await storeEnv.drop();
});

async function queued(id: string, credits = 10): Promise<Job> {
  const accounts = await store.accounts.listAccounts();
  const accountId = accounts[0]?.id ?? (await createAccount(store, clock, { monthlyCredits: 1000 })).account_id;
  const now = clock.now();
  const job: Job = {
    id, kind: 'avatar', accountId, keyId: 'key_x', sandbox: true, status: 'queued', input: { type: 'prompt', name: 'x', prompt: 'y' },
    webhookUrl: null, credits, period: '2026-11', error: null, result: null, createdAt: now, updatedAt: now, completedAt: null, attempts: 0,
  };
  const outcome = await store.jobs.createJobReservingCredits(job);
  expect(outcome.ok).toBe(true);
  return job;
}

describe('claimJob', () => {
  it('hands each job to one worker only', async () => {
    await queued('av_1');
    const now = clock.now();

    const a = await store.jobs.claimJob('w1', now, now + 1000);
    const b = await store.jobs.claimJob('w2', now, now + 1000);

    expect(a?.id).toBe('av_1');
    expect(a?.status).toBe('processing');
    expect(b).toBeNull();
  });

  it('retakes a job whose lease expired, counting the attempt', async () => {
    await queued('av_1');
    const now = clock.now();
    await store.jobs.claimJob('w1', now, now + 1000);

    const retaken = await store.jobs.claimJob('w2', now + 1001, now + 2001);

    expect(retaken).toMatchObject({ id: 'av_1', attempts: 2 });
    expect(await store.jobs.renewLease('av_1', 'w1', now + 5000)).toBe(false);
  });

  it('serves the oldest job first', async () => {
    await queued('av_old');
    clock.advance(1);
    await queued('av_new');

    expect((await store.jobs.claimJob('w', clock.now(), clock.now() + 10))?.id).toBe('av_old');
  });
});

describe('completeJob', () => {
  it('captures on ready and refuses a second completion', async () => {
    const job = await queued('av_1');

    const first = await store.jobs.completeJob(job.id, { status: 'ready', error: null, result: {}, at: clock.now() }, null);
    const second = await store.jobs.completeJob(job.id, { status: 'failed', error: { code: 'x', message: 'y' }, result: null, at: clock.now() }, null);

    expect([first, second]).toEqual([true, false]);
    expect(await store.jobs.creditBalance(job.accountId, '2026-11')).toMatchObject({ used: 10, reserved: 0 });
  });
});

describe('a reservation the account cannot cover', () => {
  it('creates no job and changes no balance', async () => {
    await queued('av_1', 995);
    const accountId = (await store.accounts.listAccounts())[0]!.id;
    const job: Job = { ...(await store.jobs.getJob('av_1'))!, id: 'av_2', credits: 10 };

    const outcome = await store.jobs.createJobReservingCredits(job);

    expect(outcome).toMatchObject({ ok: false, balance: { available: 5 } });
    expect(await store.jobs.getJob('av_2')).toBeNull();
    expect(await store.jobs.creditBalance(accountId, '2026-11')).toMatchObject({ reserved: 995 });
  });
});

describe('the outbox', () => {
  it('rolls the state change back with an event that cannot be recorded, so neither exists alone', async () => {
    const job = await queued('av_1');
    const broken = {
      id: 'evt_x', type: 'avatar.ready', jobId: 'av_missing', accountId: job.accountId, url: 'https://h.example/x', payload: '{}',
      status: 'pending' as const, attempts: 0, nextAttemptAt: 0, lastError: null, createdAt: 0, deliveredAt: null,
    };

    await expect(store.jobs.completeJob(job.id, { status: 'ready', error: null, result: {}, at: clock.now() }, broken)).rejects.toThrow();

    expect((await store.jobs.getJob(job.id))?.status).toBe('queued');
    expect(await store.jobs.creditBalance(job.accountId, '2026-11')).toMatchObject({ reserved: 10, used: 0 });
    expect(await store.outbox.getEvent('evt_x')).toBeNull();
  });

  it('records the event with the terminal state in one step', async () => {
    const job = await queued('av_1');
    const event = {
      id: 'evt_y', type: 'avatar.ready', jobId: job.id, accountId: job.accountId, url: 'https://h.example/x', payload: '{"id":"evt_y"}',
      status: 'pending' as const, attempts: 0, nextAttemptAt: 0, lastError: null, createdAt: 0, deliveredAt: null,
    };

    await store.jobs.completeJob(job.id, { status: 'ready', error: null, result: {}, at: clock.now() }, event);

    expect(await store.outbox.getEvent('evt_y')).toMatchObject({ status: 'pending', payload: '{"id":"evt_y"}' });
  });
});

describe('nextDueAt', () => {
  it('leaves out an event held by an attempt, so the sender does not spin on it', async () => {
    const job = await queued('av_1');
    const event = {
      id: 'evt_z', type: 'avatar.ready', jobId: job.id, accountId: job.accountId, url: 'https://h.example/x', payload: '{}',
      status: 'pending' as const, attempts: 0, nextAttemptAt: 1000, lastError: null, createdAt: 0, deliveredAt: null,
    };
    await store.jobs.completeJob(job.id, { status: 'ready', error: null, result: {}, at: 1000 }, event);
    const due = await store.outbox.nextDueAt(1500);

    await store.outbox.claimDueEvents(1500, 10, 30_000);

    expect(due).toBe(1000);
    expect(await store.outbox.nextDueAt(1600)).toBeNull();
    expect(await store.outbox.nextDueAt(30_001)).toBe(1000); // its lease ran out: due again
  });
});
