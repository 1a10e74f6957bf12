// Two job runners on one store, each on a connection of its own as two processes would
// be, drain many jobs together: every job is run exactly once, by one of them, and charged
// once. Claims that several runners make at the same moment (and the embedded store's
// group commit, which runs a turn's claims in one transaction) must never hand one job to both.
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { createAccount } from '../../src/domain/accounts.ts';
import type { DomainDeps } from '../../src/domain/deps.ts';
import type { GenerationEngine } from '../../src/domain/engine.ts';
import { createFinishedRecords } from '../../src/domain/finishedRecords.ts';
import { createKeyCache } from '../../src/domain/keyCache.ts';
import type { Job } from '../../src/domain/model.ts';
import type { Store } from '../../src/domain/ports.ts';
import { openStore } from '../../src/runtime.ts';
import { createJobRunner, type JobRunner } from '../../src/workers/jobRunner.ts';
import { createTestStoreEnv, type TestStoreEnv } from '../support/stores.ts';

const JOBS = 200;
const CREDITS = 10;

let storeEnv: TestStoreEnv;
let stores: Store[];
let runners: JobRunner[] = [];

beforeEach(async () => {
  storeEnv = await createTestStoreEnv();
  const config = loadConfig(storeEnv.env);
  stores = [await openStore(config, { serving: false }), await openStore(config, { serving: false })];
});
afterEach(async () => {
  for (const r of runners) await r.stop(0);
  runners = [];
  for (const s of stores) await s.close();
  await storeEnv.drop();
});

const clock = { now: () => Date.now() };

function deps(store: Store): DomainDeps {
  return { store, keys: createKeyCache(), finished: createFinishedRecords(), clock, publicBaseUrl: 'http://127.0.0.1:1', fileLinkKey: 'two-runners-file-link-key-of-32-chars', mode: 'sandbox' };
}

describe('two job runners on one store', () => {
  it('run every one of many jobs exactly once between them, and charge each once', async () => {
    const accountId = (await createAccount(stores[0]!, clock, { monthlyCredits: JOBS * CREDITS })).account_id;
    const period = new Date().toISOString().slice(0, 7);
    for (let i = 0; i < JOBS; i++) {
      const now = clock.now();
      const job: Job = {
        id: `av_two_runners_${String(i).padStart(4, '0')}`, kind: 'avatar', accountId, keyId: 'key_x', sandbox: true, status: 'queued',
        input: { type: 'prompt', name: 'x', prompt: 'y' }, webhookUrl: null, credits: CREDITS, period, error: null, result: null,
        createdAt: now, updatedAt: now, completedAt: null, attempts: 0,
      };
      expect((await stores[0]!.jobs.createJobReservingCredits(job, now)).ok).toBe(true);
    }

    const runs = new Map<string, string[]>();
    let allRun!: () => void;
    const everyJobRun = new Promise<void>((resolve) => (allRun = resolve));
    const engine = (who: string): GenerationEngine => ({
      async generate(job) {
        runs.set(job.id, [...(runs.get(job.id) ?? []), who]);
        if ([...runs.values()].reduce((n, by) => n + by.length, 0) >= JOBS) allRun();
        await new Promise((resolve) => setImmediate(resolve)); // let the other runner claim meanwhile
        return { status: 'ready', result: {} };
      },
      async artifact() {
        return null;
      },
    });
    const options = { concurrency: 8, leaseMs: 60_000, pollMs: 10, maxAttempts: 3 };
    runners = ['a', 'b'].map((who, i) => createJobRunner(deps(stores[i]!), engine(who), options, pino({ level: 'silent' })));
    for (const r of runners) r.start();
    await everyJobRun;
    for (const r of runners) await r.stop(10_000); // the jobs in flight finish

    expect(runs.size).toBe(JOBS);
    expect([...runs.values()].filter((by) => by.length !== 1)).toEqual([]);
    // Both took part: the test would prove nothing if one runner had done it all.
    const by = [...runs.values()].flat();
    expect(by.filter((w) => w === 'a').length).toBeGreaterThan(0);
    expect(by.filter((w) => w === 'b').length).toBeGreaterThan(0);
    expect(await stores[1]!.jobs.countActiveJobs()).toEqual({ queued: 0, processing: 0 });
    expect(await stores[1]!.jobs.creditBalance(accountId, period)).toMatchObject({ used: JOBS * CREDITS, reserved: 0 });
  });
});
