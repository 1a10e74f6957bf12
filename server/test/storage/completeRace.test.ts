// Two completions of one job at the same moment, from two connections to the store as two
// workers would make them (ST-TERMINAL): one moves the job, captures its credits once and
// records its one event; the other changes nothing and says so.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { createAccount } from '../../src/domain/accounts.ts';
import { buildTerminalEvent } from '../../src/domain/events.ts';
import type { Job } from '../../src/domain/model.ts';
import type { Store } from '../../src/domain/ports.ts';
import { openStore } from '../../src/runtime.ts';
import { fakeClock } from '../support/clock.ts';
import { createTestStoreEnv, type TestStoreEnv } from '../support/stores.ts';

let storeEnv: TestStoreEnv;
let stores: Store[];
const clock = fakeClock();

beforeEach(async () => {
  storeEnv = await createTestStoreEnv();
  const config = loadConfig(storeEnv.env);
  stores = [await openStore(config, { serving: false }), await openStore(config, { serving: false })];
});
afterEach(async () => {
  for (const s of stores) await s.close();
  await storeEnv.drop();
});

describe('two completions of one job at once', () => {
  it('let one win: the job ends once, its credits are captured once and its webhook event is recorded once', async () => {
    const [a, b] = stores as [Store, Store];
    const { account_id: accountId } = await createAccount(a, clock, { monthlyCredits: 100 });
    const now = clock.now();
    const jobs: Job[] = Array.from({ length: 20 }, (_, i) => ({
      id: `av_race_${i}`, kind: 'avatar', accountId, keyId: 'key_x', sandbox: true, status: 'queued', input: { type: 'prompt', name: 'x', prompt: 'y' },
      webhookUrl: 'https://hooks.example.com/a', credits: 5, period: '2026-11', error: null, result: null, createdAt: now, updatedAt: now, completedAt: null, attempts: 0,
    }));
    for (const job of jobs) expect((await a.jobs.createJobReservingCredits(job, now)).ok).toBe(true);

    for (const job of jobs) {
      const ready = { ...job, status: 'ready' as const, result: {}, updatedAt: now, completedAt: now };
      const failed = { ...job, status: 'failed' as const, error: { code: 'generation_failed', message: 'x' }, updatedAt: now, completedAt: now };
      const outcomes = await Promise.all([
        a.jobs.completeJob(job.id, { status: 'ready', error: null, result: {}, at: now }, buildTerminalEvent(ready, 'http://127.0.0.1:1', now)),
        b.jobs.completeJob(job.id, { status: 'failed', error: failed.error, result: null, at: now }, buildTerminalEvent(failed, 'http://127.0.0.1:1', now)),
      ]);
      expect(outcomes.filter(Boolean)).toHaveLength(1);
      const stored = await a.jobs.getJob(job.id);
      expect(stored?.status).toBe(outcomes[0] ? 'ready' : 'failed');
      const events = await a.outbox.listEvents({ accountId, jobId: job.id, limit: 10 });
      expect(events.map((e) => e.type)).toEqual([outcomes[0] ? 'avatar.ready' : 'avatar.failed']);
    }
    const readyCount = (await Promise.all(jobs.map((j) => a.jobs.getJob(j.id)))).filter((j) => j?.status === 'ready').length;
    expect(await a.jobs.creditBalance(accountId, '2026-11')).toMatchObject({ reserved: 0, used: readyCount * 5 });
  });
});
