// A queue is read from its head, in its index's order, however it has grown since
// PostgreSQL last looked at it. Planned from statistics of a short queue (or none), a
// claim would read every runnable job or due event and sort them, cheap on a handful;
// on a queue of thousands every claim costs them all, and a burst drains at a fraction
// of the workers' speed. Rows locked FOR UPDATE (a job claim's) are even sorted in full.
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { createAccount } from '../../src/domain/accounts.ts';
import { buildTerminalEvent } from '../../src/domain/events.ts';
import type { Job } from '../../src/domain/model.ts';
import type { Store } from '../../src/domain/ports.ts';
import { openBulkLoader, openStore } from '../../src/runtime.ts';
import type { BulkLoader } from '../../src/storage/bulk.ts';
import { fakeClock } from '../support/clock.ts';
import { createTestStoreEnv, TEST_DATABASE_URL, type TestStoreEnv } from '../support/stores.ts';

/** More rows than a sort holds in 64 kB: sorting the runnable jobs writes a temporary file. */
const BACKLOG = 3_000;
/** Past the executions after which PostgreSQL may keep one plan for a statement it was asked to prepare. */
const CLAIMS_ON_A_SHORT_QUEUE = 8;

let storeEnv: TestStoreEnv;
let store: Store;
let loader: BulkLoader;
let db: pg.Client;
const clock = fakeClock();

beforeEach(async () => {
  storeEnv = await createTestStoreEnv();
  // The store's sorts that spill to disk fail (work_mem at its least, no temporary files),
  // so that a claim that sorts the queue fails rather than only slows down.
  const url = new URL(storeEnv.env.DATABASE_URL!);
  url.searchParams.set('options', `${url.searchParams.get('options')} -c work_mem=64 -c temp_file_limit=0`);
  store = await openStore(loadConfig({ ...storeEnv.env, DATABASE_URL: url.toString() }), { serving: false });
  loader = openBulkLoader(loadConfig(storeEnv.env));
  db = new pg.Client({ connectionString: storeEnv.env.DATABASE_URL });
  await db.connect();
});
/** What a test opened beside the store, closed after it. */
const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of cleanup.splice(0)) await close();
  await db.end();
  await loader.close();
  await store.close();
  await storeEnv.drop();
});

function jobOf(id: string, accountId: string, status: 'queued' | 'ready'): Job {
  clock.advance(1);
  const now = clock.now();
  return {
    id, kind: 'avatar', accountId, keyId: 'key_x', sandbox: true, status, input: { type: 'prompt', name: 'x', prompt: 'y' },
    webhookUrl: status === 'ready' ? 'https://hooks.example.test/one' : null, credits: 1, period: '2026-11', error: null,
    result: null, createdAt: now, updatedAt: now, completedAt: status === 'ready' ? now : null, attempts: 0,
  };
}

describe('a job claim on PostgreSQL', () => {
  it("reads only the first rows of a queue that grew after its statistics and the connection's last claims", async () => {
    const { account_id: accountId } = await createAccount(store, clock, { monthlyCredits: 1_000_000 });
    for (let i = 0; i < CLAIMS_ON_A_SHORT_QUEUE; i++) {
      await loader.insertQueuedJobs([jobOf(`av_short_${i}`, accountId, 'queued')]);
      const claimed = await store.jobs.claimJobs('w1', clock.now(), clock.now() + 60_000, 1);
      expect(claimed.map((j) => j.id)).toEqual([`av_short_${i}`]);
    }
    await db.query('ANALYZE jobs'); // statistics of the short queue, as autovacuum may have taken them
    const backlog = Array.from({ length: BACKLOG }, (_, i) => jobOf(`av_backlog_${String(i).padStart(4, '0')}`, accountId, 'queued'));
    await loader.insertQueuedJobs(backlog);

    const claimed = await store.jobs.claimJobs('w1', clock.now(), clock.now() + 60_000, 4);

    expect(claimed.map((j) => j.id)).toEqual(backlog.slice(0, 4).map((j) => j.id));
  });
});

describe('the webhook queue on PostgreSQL', () => {
  /** BACKLOG pending events, all due; what a claim reads of them, the second time it reads (the first also reads the catalogs, to plan). */
  async function pendingEvents(): Promise<{ pages: number; secondRead: (sql: string) => Promise<{ rows: number; buffers: number }> }> {
    const { account_id: accountId } = await createAccount(store, clock, { monthlyCredits: 1_000_000 });
    const finished = Array.from({ length: BACKLOG }, (_, i) => jobOf(`av_done_${String(i).padStart(4, '0')}`, accountId, 'ready'));
    await loader.insertFinishedJobs(finished.map((job) => ({ job, event: buildTerminalEvent(job, 'http://127.0.0.1:1', job.completedAt!)! })));
    // Statistics of the backlog, as autovacuum takes them after a burst (when it does: the
    // plan, and what it reads, must not depend on whether it came by yet).
    await db.query('ANALYZE webhook_events');
    const { rows } = await db.query("SELECT pg_relation_size('webhook_events') / current_setting('block_size')::int AS pages");
    const read = async (sql: string) => {
      const plan = (await db.query(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${sql}`, [clock.now()])).rows[0]['QUERY PLAN'][0].Plan;
      return { rows: plan['Actual Rows'] as number, buffers: (plan['Shared Hit Blocks'] as number) + (plan['Shared Read Blocks'] as number) };
    };
    return { pages: Number(rows[0].pages), secondRead: async (sql) => (await read(sql), read(sql)) };
  }

  it('has its head read from the due index, a few pages for a few events, however many are pending', async () => {
    const { pages, secondRead } = await pendingEvents();

    const head = await secondRead('SELECT * FROM due_webhook_events($1, 10)');

    expect(head.rows).toBe(10);
    expect(head.buffers).toBeLessThan(pages / 10);
  });

  it('has its attempts in flight counted from their leases, not from the leases of every event delivered since', async () => {
    const { pages, secondRead } = await pendingEvents();
    // Another file's session with its snapshot open all along, as a loaded run has them:
    // the deleted rows' index entries cannot be marked dead, so what a scan skips, it skips
    // by its range.
    const otherFile = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await otherFile.connect();
    cleanup.push(() => otherFile.end());
    await otherFile.query('BEGIN ISOLATION LEVEL REPEATABLE READ; SELECT 1');
    // Every event leased and delivered a lease's length ago or more, as a drain leaves
    // them (each lease left an entry in the leases' index that outlives its delivery until
    // a vacuum), then five leased now and in flight.
    await db.query('UPDATE webhook_events SET lease_until = created_at - $1::bigint', [60_000]);
    await db.query("UPDATE webhook_events SET status = 'delivered', lease_until = NULL WHERE id NOT IN (SELECT id FROM webhook_events ORDER BY id LIMIT 5)");
    await db.query("UPDATE webhook_events SET lease_until = $1::bigint + $2::bigint WHERE status = 'pending'", [clock.now(), 60_000]);

    const inFlight = await secondRead('SELECT * FROM webhook_attempts_in_flight($1)');

    expect(inFlight.rows).toBe(1); // one destination, with five attempts
    expect(inFlight.buffers).toBeLessThan(pages / 10);
  });
});
