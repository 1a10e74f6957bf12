// Creates without an idempotency key that arrive together share one statement and one
// commit on PostgreSQL (storage/postgres-redis/createGroup.ts). Each is still decided on
// its own, as if it ran alone: a refusal leaves the others accepted, processes never
// overspend an account together, and a group that cannot commit stores none of its
// creates; those PostgreSQL refused are sent again alone, so only the one it cannot take fails.
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { createAccount } from '../../src/domain/accounts.ts';
import type { Job } from '../../src/domain/model.ts';
import type { ReserveOutcome, Store } from '../../src/domain/ports.ts';
import { openStore } from '../../src/runtime.ts';
import { fakeClock } from '../support/clock.ts';
import { GENEROUS_PLAN, promptAvatar, startTestService } from '../support/harness.ts';
import { createTestStoreEnv, type TestStoreEnv } from '../support/stores.ts';

const PERIOD = '2026-11';

let storeEnv: TestStoreEnv;
let stores: Store[];
let sql: pg.Client;
const clock = fakeClock();

beforeEach(async () => {
  storeEnv = await createTestStoreEnv();
  const config = loadConfig(storeEnv.env);
  // Two stores on one database: two processes, each with its own pool and its own groups.
  stores = [await openStore(config, { serving: false }), await openStore(config, { serving: false })];
  sql = new pg.Client({ connectionString: storeEnv.env.DATABASE_URL });
  await sql.connect();
});
afterEach(async () => {
  await sql.end();
  for (const s of stores) await s.close();
  await storeEnv.drop();
});

let serial = 0;
function job(accountId: string, credits = 10, name = 'x'): Job {
  const now = clock.now();
  return {
    id: `av_group_${++serial}`, kind: 'avatar', accountId, keyId: 'key_x', sandbox: true, status: 'queued', input: { type: 'prompt', name, prompt: 'y' },
    webhookUrl: null, credits, period: PERIOD, error: null, result: null, createdAt: now, updatedAt: now, completedAt: null, attempts: 0,
  };
}

const account = async (monthlyCredits: number) => (await createAccount(stores[0]!, clock, { monthlyCredits })).account_id;
const jobIds = async (accountId: string) => (await sql.query('SELECT id FROM jobs WHERE account_id = $1 ORDER BY id', [accountId])).rows.map((r) => r.id as string).sort();
/** The transactions that wrote these jobs (their rows' xmin): one for a group committed together. */
const writers = async (ids: string[]) => new Set((await sql.query('SELECT xmin::text AS x FROM jobs WHERE id = ANY($1)', [ids])).rows.map((r) => r.x as string)).size;

describe('creates that arrive together', () => {
  it('are committed together, each decided in turn: a refused one leaves those before and after it accepted', async () => {
    const [store] = stores as [Store];
    const accountId = await account(25);
    const asked = [job(accountId, 10), job(accountId, 20), job(accountId, 10)];

    const outcomes = await Promise.all(asked.map((j) => store.jobs.createJobReservingCredits(j, j.createdAt)));

    expect(outcomes.map((o) => o.ok)).toEqual([true, false, true]);
    // The refusal names the balance it was refused on: 15 left after the first.
    expect(outcomes[1]).toMatchObject({ ok: false, balance: { period: PERIOD, quota: 25, reserved: 10, used: 0, available: 15 } });
    expect(await jobIds(accountId)).toEqual([asked[0]!.id, asked[2]!.id].sort());
    expect(await writers([asked[0]!.id, asked[2]!.id])).toBe(1);
    expect(await store.jobs.creditBalance(accountId, PERIOD)).toMatchObject({ reserved: 20, available: 5 });
  });

  it("refuse a create the plan's credits cannot cover as the period's first reservation, and accept the next that fits", async () => {
    const [store] = stores as [Store];
    const accountId = await account(15);
    const asked = [job(accountId, 20), job(accountId, 10), job(accountId, 10)];

    const outcomes = await Promise.all(asked.map((j) => store.jobs.createJobReservingCredits(j, j.createdAt)));

    expect(outcomes.map((o) => o.ok)).toEqual([false, true, false]);
    expect(outcomes[0]).toMatchObject({ balance: { quota: 15, reserved: 0, available: 15 } });
    expect(outcomes[2]).toMatchObject({ balance: { quota: 15, reserved: 10, available: 5 } });
    expect(await jobIds(accountId)).toEqual([asked[1]!.id]);
  });

  it('of an account that does not exist are refused with an empty balance, and the others of the group stand', async () => {
    const [store] = stores as [Store];
    const accountId = await account(100);
    const asked = [job('acct_missing'), job(accountId)];

    const outcomes = await Promise.all(asked.map((j) => store.jobs.createJobReservingCredits(j, j.createdAt)));

    expect(outcomes).toEqual([
      { ok: false, balance: { period: PERIOD, quota: 0, reserved: 0, used: 0, available: 0 } },
      { ok: true, job: asked[1] },
    ]);
  });

  it('with one PostgreSQL refuses (its ID taken) fail that one alone: the others are accepted, stored and charged', async () => {
    const [store] = stores as [Store];
    const accountId = await account(100);
    const first = job(accountId);
    expect((await store.jobs.createJobReservingCredits(first, first.createdAt)).ok).toBe(true);
    const asked = [job(accountId), { ...job(accountId), id: first.id }, job(accountId)];

    const outcomes = await Promise.allSettled(asked.map((j) => store.jobs.createJobReservingCredits(j, j.createdAt)));

    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(outcomes[1]).toMatchObject({ reason: { code: '23505' } }); // unique_violation
    expect(await jobIds(accountId)).toEqual([first.id, asked[0]!.id, asked[2]!.id].sort());
    expect(await store.jobs.creditBalance(accountId, PERIOD)).toMatchObject({ reserved: 30 });
  });

  it('from two processes at once never spend more than the account has, nor anything twice', async () => {
    const accountId = await account(1_005);
    const asked = Array.from({ length: 240 }, () => job(accountId));

    const outcomes: ReserveOutcome[] = await Promise.all(asked.map((j, i) => stores[i % 2]!.jobs.createJobReservingCredits(j, j.createdAt)));

    const accepted = asked.filter((_, i) => outcomes[i]!.ok).map((j) => j.id);
    expect(accepted).toHaveLength(100);
    expect(await jobIds(accountId)).toEqual(accepted.sort());
    expect(await stores[0]!.jobs.creditBalance(accountId, PERIOD)).toMatchObject({ quota: 1_005, reserved: 1_000, used: 0, available: 5 });
    for (const o of outcomes) if (!o.ok && 'balance' in o) expect(o.balance.available).toBeLessThan(10);
  });

  it('of two accounts, asked in opposite orders by two processes, never wait on each other in a circle', async () => {
    const [first, second] = [await account(1_000), await account(1_000)];
    for (const a of [first, second]) {
      const opening = job(a);
      expect((await stores[0]!.jobs.createJobReservingCredits(opening, opening.createdAt)).ok).toBe(true);
    }
    // The first account's ledger row held elsewhere: one process's group waits for it
    // before the other's has finished, so the two groups overlap. Were the rows locked in
    // the order asked, the other group would hold the second account's row and wait for
    // the first's, while the first group held that and waited for the second's.
    const holder = new pg.Client({ connectionString: storeEnv.env.DATABASE_URL });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT 1 FROM credit_ledger WHERE account_id = $1 FOR UPDATE', [first]);
      const forward = [job(first), job(second)];
      const backward = [job(second), job(first)];
      const outcomes = Promise.all([
        ...forward.map((j) => stores[0]!.jobs.createJobReservingCredits(j, j.createdAt)),
        ...backward.map((j) => stores[1]!.jobs.createJobReservingCredits(j, j.createdAt)),
      ]);
      await waitForLockWaits(2);
      await holder.query('COMMIT');
      expect((await outcomes).every((o) => o.ok)).toBe(true);
    } finally {
      await holder.end();
    }
    for (const a of [first, second]) expect(await stores[0]!.jobs.creditBalance(a, PERIOD)).toMatchObject({ reserved: 30 });
  });
});

/** Until `n` statements of this schema's connections wait for a row lock (bounded: a test states its limit). */
async function waitForLockWaits(n: number): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const r = await sql.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%create_jobs_reserving%'`);
    if (r.rows[0].n >= n) return;
    if (Date.now() > deadline) throw new Error(`${r.rows[0].n} of ${n} grouped creates waiting for a lock after 10 s`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Fails, at COMMIT, every transaction that wrote a job whose input is named `name`: a commit that cannot happen. */
async function failCommitsOf(client: pg.Client, name: string): Promise<void> {
  await client.query(`
    CREATE FUNCTION refuse_at_commit() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NEW.input->>'name' = ${pg.escapeLiteral(name)} THEN RAISE EXCEPTION 'refused at commit'; END IF;
      RETURN NULL;
    END $$;
    CREATE CONSTRAINT TRIGGER refuse_at_commit AFTER INSERT ON jobs DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION refuse_at_commit();`);
}

describe('a group that cannot commit', () => {
  it('stores none of it; sent again one at a time, only the create PostgreSQL refuses fails, reserving nothing', async () => {
    const [store] = stores as [Store];
    const accountId = await account(100);
    await failCommitsOf(sql, 'fails at commit');
    const asked = [job(accountId), job(accountId, 10, 'fails at commit'), job(accountId)];

    const settled = await Promise.allSettled(asked.map((j) => store.jobs.createJobReservingCredits(j, j.createdAt)));

    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(await jobIds(accountId)).toEqual([asked[0]!.id, asked[2]!.id].sort());
    // Each stored on its own: the group's statement, which held all three, committed nothing.
    expect(await writers([asked[0]!.id, asked[2]!.id])).toBe(2);
    expect(await store.jobs.creditBalance(accountId, PERIOD)).toMatchObject({ reserved: 20, available: 80 });
  });

  it('answers each of its requests with a problem and charges nothing', async () => {
    const svc = await startTestService({ storeEnv });
    try {
      const { api_key: key } = await svc.account({ credits: 100, plan: GENEROUS_PLAN });
      await failCommitsOf(sql, 'fails at commit');

      const replies = await Promise.all(Array.from({ length: 4 }, () => svc.request('POST', '/v1/avatars', { key, json: promptAvatar({ name: 'fails at commit' }) })));

      for (const reply of replies) {
        expect(reply.status).toBe(500);
        expect(reply.headers.get('content-type')).toContain('application/problem+json');
        expect(reply.body.code).toBe('internal_error');
      }
      expect((await svc.request('GET', '/v1/me', { key })).body.credits).toMatchObject({ reserved: 0, used: 0, available: 100 });
      expect(await svc.activeJobs()).toBe(0);
    } finally {
      await svc.dispose();
    }
  });
});
