// The bulk loader the benchmark seeds and reads stores through, on whichever adapter the
// project runs: what it writes is what the server's own operations would have left, and
// the store, open beside it on a connection of its own, reads it as its own.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { createAccount } from '../../src/domain/accounts.ts';
import { buildTerminalEvent } from '../../src/domain/events.ts';
import { isJobId, newAvatarId } from '../../src/domain/ids.ts';
import type { Job } from '../../src/domain/model.ts';
import type { Store } from '../../src/domain/ports.ts';
import { openBulkLoader, openStore } from '../../src/runtime.ts';
import type { BulkLoader } from '../../src/storage/bulk.ts';
import { fakeClock } from '../support/clock.ts';
import { createTestStoreEnv, type TestStoreEnv } from '../support/stores.ts';

let storeEnv: TestStoreEnv;
let store: Store;
let bulk: BulkLoader;
let accountId: string;
let keyId: string;
const clock = fakeClock();
const FAIR = { perDestination: 8, circuitFailures: 5 };

beforeEach(async () => {
  storeEnv = await createTestStoreEnv();
  store = await openStore(loadConfig(storeEnv.env), { serving: false });
  bulk = openBulkLoader(loadConfig(storeEnv.env));
  ({ account_id: accountId, key_id: keyId } = await createAccount(store, clock, { monthlyCredits: 1000 }));
});
afterEach(async () => {
  await bulk.close();
  await store.close();
  await storeEnv.drop();
});

function job(status: Job['status'], at: number, webhookUrl: string | null = null): Job {
  const done = status === 'ready';
  return {
    id: newAvatarId(), kind: 'avatar', accountId, keyId, sandbox: true, status, input: { type: 'prompt', name: 'x', prompt: 'y' }, webhookUrl,
    credits: 10, period: '2026-11', error: null, result: done ? {} : null, createdAt: at, updatedAt: at, completedAt: done ? at : null, attempts: done ? 1 : 0,
  };
}

describe('the bulk loader', () => {
  it('writes ready avatars with IDs of the service’s own shape, and reads them back', async () => {
    await bulk.insertReadyAvatars(job('ready', 1000), 500);

    const ids = await bulk.sampleJobIds(accountId, 'avatar', 20);
    const one = await store.jobs.getJob(ids[0]!);

    expect(ids).toHaveLength(20);
    expect(ids.every((id) => isJobId('avatar', id))).toBe(true);
    expect(one).toMatchObject({ status: 'ready', accountId, completedAt: 1000 });
    expect(await bulk.jobProgress(accountId)).toEqual({ total: 500, terminal: 500, minCreatedAt: 1000, minCompletedAt: 1000, maxCompletedAt: 1000 });
  });

  it('writes queued jobs with their credits reserved, which a worker then claims', async () => {
    await bulk.insertQueuedJobs([job('queued', 1), job('queued', 2), job('queued', 3)]);

    const claimed = await store.jobs.claimJob('w', 10, 1000);

    expect(await store.jobs.creditBalance(accountId, '2026-11')).toMatchObject({ reserved: 30, available: 970 });
    expect(claimed?.createdAt).toBe(1);
  });

  it('writes finished jobs with pending events that the outbox then sends, and counts them', async () => {
    const rows = [1, 2].map((at) => {
      const j = job('ready', at, 'https://h.example/hook');
      return { job: j, event: buildTerminalEvent(j, 'http://localhost:3000', at)! };
    });
    await bulk.insertFinishedJobs(rows);

    const due = await store.outbox.claimDueEvents(10, 10, 1000, FAIR);

    expect(due.map((e) => e.id).sort()).toEqual(rows.map((r) => r.event.id).sort());
    expect(due[0]).toMatchObject({ destination: 'h.example:443', payload: rows[0]!.event.payload });
    expect(await bulk.eventCounts(accountId)).toEqual({ pending: 2 });
    expect(await bulk.jobTimes(accountId)).toEqual(expect.arrayContaining([{ createdAt: 1, completedAt: 1 }, { createdAt: 2, completedAt: 2 }]));
  });

  it('writes keys the store then finds by their hash', async () => {
    await bulk.insertKeys([{ id: 'key_bulk', accountId, mode: 'sandbox', prefix: 'sk_test_abcd', hash: 'f'.repeat(64), createdAt: 5 }]);

    expect((await store.accounts.findKeyByHash('f'.repeat(64)))?.key.id).toBe('key_bulk');
  });
});
