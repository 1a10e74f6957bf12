// A claim costs what the first rows of the queue cost, however the queue has grown since
// PostgreSQL last looked at it. Planned from statistics of a short queue (or none), a
// claim would sort every runnable row, cheap on a handful; rows locked FOR UPDATE are
// sorted in full, never only up to the LIMIT, so on a queue of thousands every claim
// costs them all and a burst drains at a fraction of the runner's speed.
// Here the store's sort that spills to disk is an error (work_mem at its least, no
// temporary files), so a claim that sorts the queue fails rather than only slows down.
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { createAccount } from '../../src/domain/accounts.ts';
import type { Job } from '../../src/domain/model.ts';
import type { Store } from '../../src/domain/ports.ts';
import { openBulkLoader, openStore } from '../../src/runtime.ts';
import type { BulkLoader } from '../../src/storage/bulk.ts';
import { fakeClock } from '../support/clock.ts';
import { createTestStoreEnv, type TestStoreEnv } from '../support/stores.ts';

/** More queued jobs than a sort holds in 64 kB: sorting them writes a temporary file. */
const BACKLOG = 3_000;
/** Past the executions after which PostgreSQL may keep one plan for a statement it was asked to prepare. */
const CLAIMS_ON_A_SHORT_QUEUE = 8;

let storeEnv: TestStoreEnv;
let store: Store;
let loader: BulkLoader;
const clock = fakeClock();

beforeEach(async () => {
  storeEnv = await createTestStoreEnv();
  const url = new URL(storeEnv.env.DATABASE_URL!);
  url.searchParams.set('options', `${url.searchParams.get('options')} -c work_mem=64 -c temp_file_limit=0`);
  store = await openStore(loadConfig({ ...storeEnv.env, DATABASE_URL: url.toString() }), { serving: false });
  loader = openBulkLoader(loadConfig(storeEnv.env));
});
afterEach(async () => {
  await loader.close();
  await store.close();
  await storeEnv.drop();
});

function queuedJob(id: string, accountId: string): Job {
  clock.advance(1);
  const now = clock.now();
  return {
    id, kind: 'avatar', accountId, keyId: 'key_x', sandbox: true, status: 'queued', input: { type: 'prompt', name: 'x', prompt: 'y' },
    webhookUrl: null, credits: 1, period: '2026-11', error: null, result: null, createdAt: now, updatedAt: now, completedAt: null, attempts: 0,
  };
}

async function analyzeJobs(): Promise<void> {
  const client = new pg.Client({ connectionString: storeEnv.env.DATABASE_URL });
  await client.connect();
  try {
    await client.query('ANALYZE jobs');
  } finally {
    await client.end();
  }
}

describe('a claim on PostgreSQL', () => {
  it('reads only the first rows of a queue that grew after its statistics and the connection\'s last claims', async () => {
    const { account_id: accountId } = await createAccount(store, clock, { monthlyCredits: 1_000_000 });
    for (let i = 0; i < CLAIMS_ON_A_SHORT_QUEUE; i++) {
      await loader.insertQueuedJobs([queuedJob(`av_short_${i}`, accountId)]);
      const claimed = await store.jobs.claimJobs('w1', clock.now(), clock.now() + 60_000, 1);
      expect(claimed.map((j) => j.id)).toEqual([`av_short_${i}`]);
    }
    await analyzeJobs(); // statistics of the short queue, as autovacuum may have taken them
    const backlog = Array.from({ length: BACKLOG }, (_, i) => queuedJob(`av_backlog_${String(i).padStart(4, '0')}`, accountId));
    await loader.insertQueuedJobs(backlog);

    const claimed = await store.jobs.claimJobs('w1', clock.now(), clock.now() + 60_000, 4);

    expect(claimed.map((j) => j.id)).toEqual(backlog.slice(0, 4).map((j) => j.id));
  });
});
