// Two API processes and two workers on one PostgreSQL + Redis: limits and
// credits hold across processes, each job runs once, a killed worker's job is finished
// by the other and charged once, every webhook keeps one event ID, and a video a worker
// made is served by either API process at once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { createAccount } from '../../src/domain/accounts.ts';
import { systemClock } from '../../src/domain/clock.ts';
import { eventIdFor } from '../../src/domain/ids.ts';
import { openStore } from '../../src/runtime.ts';
import type { Store } from '../../src/domain/ports.ts';
import { GENEROUS_PLAN, promptAvatar } from '../support/harness.ts';
import { startReceiver, type TestReceiver } from '../support/receiver.ts';
import { startServerProcess, type ServerProcess } from '../support/serverProcess.ts';
import { createTestStoreEnv, type TestStoreEnv } from '../support/stores.ts';

let storeEnv: TestStoreEnv;
let store: Store;
let receiver: TestReceiver;
const procs: ServerProcess[] = [];
let apis: ServerProcess[];
let workers: ServerProcess[];

async function start(role: 'api' | 'worker', env: Record<string, string> = {}): Promise<ServerProcess> {
  const proc = await startServerProcess({
    ...storeEnv.env, ROLE: role, LOG_LEVEL: 'info',
    ENGINE_AVATAR_MS: '1500', ENGINE_VIDEO_MS: '0', JOB_POLL_MS: '50', JOB_LEASE_MS: '1500', WORKER_CONCURRENCY: '4',
    WEBHOOK_POLL_MS: '50', WEBHOOK_BASE_DELAY_MS: '100', ...env,
  });
  procs.push(proc);
  return proc;
}

beforeAll(async () => {
  storeEnv = await createTestStoreEnv();
  store = await openStore(loadConfig(storeEnv.env), { serving: false });
  receiver = await startReceiver();
  apis = await Promise.all([start('api'), start('api')]);
  workers = await Promise.all([start('worker', { PUBLIC_BASE_URL: apis[0]!.url }), start('worker', { PUBLIC_BASE_URL: apis[0]!.url })]);
}, 60_000);

afterAll(async () => {
  await Promise.all(procs.map((p) => p.stop('SIGKILL')));
  await receiver?.close();
  await store?.close();
  await storeEnv?.drop();
});

const post = (p: ServerProcess, key: string, path: string, body: unknown) =>
  fetch(p.url + path, { method: 'POST', headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });

async function waitTerminal(id: string, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const job = await store.jobs.getJob(id);
    if (job && (job.status === 'ready' || job.status === 'failed')) return job;
    if (Date.now() > deadline) throw new Error(`${id} is ${job?.status} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Waits out the end of the current minute, so a burst test never straddles two windows. */
async function awayFromMinuteEnd(): Promise<void> {
  const intoMinute = Date.now() % 60_000;
  if (intoMinute > 45_000) await new Promise((r) => setTimeout(r, 60_000 - intoMinute + 200));
}

describe('two API processes and two workers', () => {
  it('hold one generation limit per key across both API processes', async () => {
    const { api_key: key } = await createAccount(store, systemClock, { monthlyCredits: 10_000 });
    await awayFromMinuteEnd();

    const replies = await Promise.all(Array.from({ length: 16 }, (_, i) => post(apis[i % 2]!, key, '/v1/avatars', { type: 'bad' })));

    const statuses = replies.map((r) => r.status);
    expect(statuses.filter((s) => s === 422)).toHaveLength(10);
    expect(statuses.filter((s) => s === 429)).toHaveLength(6);
  });

  it('create one job, charged once, for 50 identical creates with one idempotency key sent to both API processes at once', async () => {
    const { api_key: key, account_id: accountId } = await createAccount(store, systemClock, { monthlyCredits: 1000, plan: GENEROUS_PLAN });

    const replies = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        fetch(apis[i % 2]!.url + '/v1/avatars', { method: 'POST', headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json', 'Idempotency-Key': 'one-job' }, body: JSON.stringify(promptAvatar()) }),
      ),
    );

    const bodies = (await Promise.all(replies.map((r) => r.json()))) as { id: string }[];
    expect(replies.map((r) => r.status)).toEqual(Array(50).fill(202));
    expect(new Set(bodies.map((b) => b.id)).size).toBe(1);
    expect(replies.filter((r) => r.headers.get('idempotent-replayed') === null)).toHaveLength(1);
    const period = new Date().toISOString().slice(0, 7);
    const balance = await store.jobs.creditBalance(accountId, period);
    expect(balance.reserved + balance.used).toBe(10);
  });

  it('refuse a key revoked elsewhere on its very next request on each API process, though both kept it', async () => {
    const { api_key: key, key_id: keyId } = await createAccount(store, systemClock);
    const me = (p: ServerProcess) => fetch(`${p.url}/v1/me`, { headers: { Authorization: `Bearer ${key}` } });
    for (const api of apis) for (let i = 0; i < 3; i++) expect((await me(api)).status).toBe(200);

    await store.accounts.revokeKey(keyId, Date.now());
    const next = await Promise.all(apis.map(me));

    expect(next.map((r) => r.status)).toEqual([401, 401]);
  });

  it('count a plan changed elsewhere from the very next request on each API process', async () => {
    const { api_key: key, account_id: accountId } = await createAccount(store, systemClock);
    const me = (p: ServerProcess) => fetch(`${p.url}/v1/me`, { headers: { Authorization: `Bearer ${key}` } });
    for (const api of apis) expect((await me(api)).headers.get('ratelimit-limit')).toBe('120');

    await store.accounts.setPlan(accountId, { read: { minute: 9_000, day: 90_000 }, generation: { minute: 10, day: 300 } });
    const next = await Promise.all(apis.map(me));

    expect(next.map((r) => r.headers.get('ratelimit-limit'))).toEqual(['9000', '9000']);
  });

  it('accept exactly as many jobs as the credits pay for, across both', async () => {
    const K = 6;
    const { api_key: key } = await createAccount(store, systemClock, { monthlyCredits: K * 10, plan: GENEROUS_PLAN });

    const replies = await Promise.all(Array.from({ length: 30 }, (_, i) => post(apis[i % 2]!, key, '/v1/avatars', promptAvatar({ webhook_url: `${receiver.url}/hooks` }))));
    const accepted = await Promise.all(replies.filter((r) => r.status === 202).map((r) => r.json() as Promise<{ id: string }>));

    expect(accepted).toHaveLength(K);
    expect(replies.filter((r) => r.status === 402)).toHaveLength(30 - K);

    // Each job ran exactly once, on one of the workers.
    const jobs = await Promise.all(accepted.map((a) => waitTerminal(a.id)));
    expect(jobs.every((j) => j.status === 'ready' && j.attempts === 1)).toBe(true);
    // A worker's log line comes over its stdout pipe, which can lag behind the record
    // the API already shows finished (a loaded run read the logs before one arrived).
    const finished = () => workers.flatMap((w) => w.logs.filter((l) => l.includes('job finished')).map((l) => JSON.parse(l).jobId as string));
    await expect.poll(() => accepted.every(({ id }) => finished().includes(id)), { timeout: 10_000 }).toBe(true);
    for (const { id } of accepted) expect(finished().filter((f) => f === id)).toHaveLength(1);
    const accountId = (await store.jobs.getJob(accepted[0]!.id))!.accountId;
    expect(await store.jobs.creditBalance(accountId, jobs[0]!.period)).toMatchObject({ used: K * 10, reserved: 0 });

    // Every webhook arrived, each under the event ID of its job.
    const deadline = Date.now() + 10_000;
    const ids = () => new Set(receiver.deliveries.filter((d) => d.path === '/hooks').map((d) => d.headers['x-service-event-id']));
    while (ids().size < K && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect([...ids()].sort()).toEqual(accepted.map((a) => eventIdFor(a.id, 'avatar.ready')).sort());
    for (const d of receiver.deliveries.filter((x) => x.path === '/hooks')) expect(d.body.id).toBe(d.headers['x-service-event-id']);
  });

  it('serve a ready video that a worker made from either API process at once: the same MP4 bytes, whole or in a range', async () => {
    const { api_key: key } = await createAccount(store, systemClock, { monthlyCredits: 1000, plan: GENEROUS_PLAN });
    const avatar = (await (await post(apis[0]!, key, '/v1/avatars', promptAvatar())).json()) as { id: string };
    await waitTerminal(avatar.id);
    const created = (await (await post(apis[1]!, key, '/v1/avatar-videos', { avatar_id: avatar.id, script: 'Made by the worker, kept for every process.' })).json()) as { id: string };
    expect((await waitTerminal(created.id)).status).toBe('ready');

    const downloads = await Promise.all(apis.map(async (api) => {
      const res = await fetch(`${api.url}/files/${created.id}/video.mp4`);
      return { status: res.status, bytes: Buffer.from(await res.arrayBuffer()) };
    }));
    const part = await fetch(`${apis[1]!.url}/files/${created.id}/video.mp4`, { headers: { Range: 'bytes=4-7' } });

    expect(downloads.map((d) => d.status)).toEqual([200, 200]);
    expect(downloads[0]!.bytes.subarray(4, 8).toString('latin1')).toBe('ftyp'); // an MP4 from its first box
    expect(downloads[0]!.bytes.length).toBeGreaterThan(10_000);
    expect(downloads[1]!.bytes.equals(downloads[0]!.bytes)).toBe(true);
    expect(part.status).toBe(206);
    expect(Buffer.from(await part.arrayBuffer()).toString('latin1')).toBe('ftyp');
  });

  it('finish the job of a worker killed with SIGKILL, charging it once', async () => {
    const account = await createAccount(store, systemClock, { monthlyCredits: 100, plan: GENEROUS_PLAN });
    const reply = await post(apis[0]!, account.api_key, '/v1/avatars', promptAvatar({ name: 'Survivor' }));
    const { id } = (await reply.json()) as { id: string };
    let owner: string | null = null;
    for (let i = 0; i < 100 && !owner; i++) {
      if ((await store.jobs.getJob(id))?.status === 'processing') owner = await leaseOwner(id);
      else await new Promise((r) => setTimeout(r, 20));
    }
    const victim = workers.find((w) => w.logs.some((l) => l.includes('job runner started') && owner && l.includes(owner)))!;
    expect(victim).toBeDefined();

    victim.child.kill('SIGKILL');
    const job = await waitTerminal(id);

    expect(job.status).toBe('ready');
    expect(job.attempts).toBe(2);
    expect(await store.jobs.creditBalance(account.account_id, job.period)).toMatchObject({ used: 10, reserved: 0 });
    // The survivor logs the job's end after committing it: its line may still be in the pipe.
    const survivor = workers.find((w) => w !== victim)!;
    expect(await survivor.waitForLine(new RegExp(`^(?=.*job finished)(?=.*${id})`))).toContain(id);
  });
});

/** Which worker holds a job: read straight from the table, for this test only. */
async function leaseOwner(id: string): Promise<string | null> {
  const pg = await import('pg');
  const client = new pg.default.Client({ connectionString: storeEnv.env.DATABASE_URL });
  await client.connect();
  const r = await client.query('SELECT lease_owner FROM jobs WHERE id = $1', [id]);
  await client.end();
  return (r.rows[0]?.lease_owner as string | null) ?? null;
}
