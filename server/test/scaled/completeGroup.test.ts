// Completions that arrive together share one statement and one commit on PostgreSQL
// (storage/postgres-redis/completeGroup.ts), as the jobs a runner claimed together end
// together. Each is still decided as if it ran alone (ST-TERMINAL): a job already
// terminal changes nothing, credits move once, each event is recorded once; and a group
// that cannot commit stores none of its completions.
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { createAccount } from '../../src/domain/accounts.ts';
import { buildTerminalEvent } from '../../src/domain/events.ts';
import type { Job } from '../../src/domain/model.ts';
import type { Store } from '../../src/domain/ports.ts';
import { openStore } from '../../src/runtime.ts';
import { fakeClock } from '../support/clock.ts';
import { createTestStoreEnv, type TestStoreEnv } from '../support/stores.ts';

const PERIOD = '2026-11';
const BASE_URL = 'http://127.0.0.1:1';

let storeEnv: TestStoreEnv;
let store: Store;
let sql: pg.Client;
const clock = fakeClock();

beforeEach(async () => {
  storeEnv = await createTestStoreEnv();
  store = await openStore(loadConfig(storeEnv.env), { serving: false });
  sql = new pg.Client({ connectionString: storeEnv.env.DATABASE_URL });
  await sql.connect();
});
afterEach(async () => {
  await sql.end();
  await store.close();
  await storeEnv.drop();
});

let serial = 0;
async function queued(accountId: string, credits: number): Promise<Job> {
  const now = clock.now();
  const job: Job = {
    id: `av_done_${++serial}`, kind: 'avatar', accountId, keyId: 'key_x', sandbox: true, status: 'queued', input: { type: 'prompt', name: 'x', prompt: 'y' },
    webhookUrl: 'https://hooks.example.com/a', credits, period: PERIOD, error: null, result: null, createdAt: now, updatedAt: now, completedAt: null, attempts: 0,
  };
  expect((await store.jobs.createJobReservingCredits(job, now)).ok).toBe(true);
  return job;
}

function complete(job: Job, status: 'ready' | 'failed'): Promise<boolean> {
  const at = clock.now();
  const error = status === 'failed' ? { code: 'generation_failed', message: 'x' } : null;
  const result = status === 'ready' ? {} : null;
  const done: Job = { ...job, status, error, result, updatedAt: at, completedAt: at };
  return store.jobs.completeJob(job.id, { status, error, result, at }, buildTerminalEvent(done, BASE_URL, at));
}

const eventTypes = async (jobId: string) => (await sql.query('SELECT type FROM webhook_events WHERE job_id = $1', [jobId])).rows.map((r) => r.type as string);

describe('completions that arrive together', () => {
  it('are committed together, each moving its own job, its credits and its event once', async () => {
    const one = (await createAccount(store, clock, { monthlyCredits: 100 })).account_id;
    const two = (await createAccount(store, clock, { monthlyCredits: 100 })).account_id;
    const [a, b, c, d] = [await queued(one, 10), await queued(one, 20), await queued(two, 30), await queued(two, 5)];
    expect(await complete(d, 'ready')).toBe(true);

    // b twice in one group: the first completion moves it, the second finds it terminal.
    const outcomes = await Promise.all([complete(a, 'ready'), complete(b, 'failed'), complete(c, 'ready'), complete(b, 'ready'), complete(d, 'failed')]);

    expect(outcomes).toEqual([true, true, true, false, false]);
    expect((await Promise.all([a, b, c, d].map((j) => store.jobs.getJob(j.id)))).map((j) => j?.status)).toEqual(['ready', 'failed', 'ready', 'ready']);
    expect(await store.jobs.creditBalance(one, PERIOD)).toMatchObject({ reserved: 0, used: 10, available: 90 });
    expect(await store.jobs.creditBalance(two, PERIOD)).toMatchObject({ reserved: 0, used: 35, available: 65 });
    expect([await eventTypes(a.id), await eventTypes(b.id), await eventTypes(c.id), await eventTypes(d.id)]).toEqual([['avatar.ready'], ['avatar.failed'], ['avatar.ready'], ['avatar.ready']]);
    const writers = (await sql.query('SELECT DISTINCT xmin::text FROM jobs WHERE id = ANY($1)', [[a.id, b.id, c.id]])).rows;
    expect(writers).toHaveLength(1);
  });

  it('that cannot commit store none of them: the jobs, their credits and the outbox are as before', async () => {
    const accountId = (await createAccount(store, clock, { monthlyCredits: 100 })).account_id;
    const [a, b] = [await queued(accountId, 10), await queued(accountId, 10)];
    await sql.query(`
      CREATE FUNCTION refuse_at_commit() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused at commit'; END $$;
      CREATE CONSTRAINT TRIGGER refuse_at_commit AFTER INSERT ON webhook_events DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION refuse_at_commit();`);

    const settled = await Promise.allSettled([complete(a, 'ready'), complete(b, 'failed')]);

    expect(settled.map((s) => s.status)).toEqual(['rejected', 'rejected']);
    expect((await Promise.all([a, b].map((j) => store.jobs.getJob(j.id)))).map((j) => j?.status)).toEqual(['queued', 'queued']);
    expect(await store.jobs.creditBalance(accountId, PERIOD)).toMatchObject({ reserved: 20, used: 0 });
    expect((await sql.query('SELECT count(*)::int AS n FROM webhook_events')).rows[0].n).toBe(0);
  });
});

describe('account reads that arrive together', () => {
  it('each answer their own account, and null for one that does not exist', async () => {
    const one = (await createAccount(store, clock, { monthlyCredits: 100, name: 'One' })).account_id;
    const two = (await createAccount(store, clock, { monthlyCredits: 200, name: 'Two' })).account_id;

    const read = await Promise.all([store.accounts.getAccount(two), store.accounts.getAccount('acct_missing'), store.accounts.getAccount(one), store.accounts.getAccount(two)]);

    expect(read.map((a) => a && { id: a.id, name: a.name, monthlyCredits: a.monthlyCredits })).toEqual([
      { id: two, name: 'Two', monthlyCredits: 200 },
      null,
      { id: one, name: 'One', monthlyCredits: 100 },
      { id: two, name: 'Two', monthlyCredits: 200 },
    ]);
  });
});
