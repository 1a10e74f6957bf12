// A job in flight when the process dies is resumed on the next start and charged once.
// The process is a real `node server/src/main.ts`, killed with SIGKILL.
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { createAccount } from '../../src/domain/accounts.ts';
import { systemClock } from '../../src/domain/clock.ts';
import { openStore } from '../../src/runtime.ts';
import { promptAvatar } from '../support/harness.ts';
import { startServerProcess, type ServerProcess } from '../support/serverProcess.ts';
import { createTestStoreEnv, type TestStoreEnv } from '../support/stores.ts';

const children: ServerProcess[] = [];
const stores: TestStoreEnv[] = [];

afterEach(async () => {
  for (const c of children.splice(0)) await c.stop('SIGKILL');
  for (const s of stores.splice(0)) await s.drop();
});

/** A store with one account; on PostgreSQL, short leases so a dead worker's job is retaken quickly. */
async function storeWithAccount(): Promise<{ storeEnv: TestStoreEnv; key: string }> {
  const storeEnv = await createTestStoreEnv();
  stores.push(storeEnv);
  const store = await openStore(loadConfig(storeEnv.env), { serving: false });
  const { api_key: key } = await createAccount(store, systemClock, { monthlyCredits: 100 });
  await store.close();
  return { storeEnv, key };
}

function startMain(storeEnv: TestStoreEnv, env: Record<string, string>): Promise<ServerProcess> {
  const started = startServerProcess({ ...storeEnv.env, LOG_LEVEL: 'warn', JOB_POLL_MS: '50', JOB_LEASE_MS: '1500', ...env });
  void started.then((proc) => children.push(proc), () => undefined);
  return started;
}

/** Polls the avatar until its status is one of `statuses` (or `tries` run out) and returns the last status. */
async function pollStatus(base: string, id: string, key: string, statuses: string[], tries = 200): Promise<string> {
  let status = '';
  for (let i = 0; i < tries && !statuses.includes(status); i++) {
    const reply = await fetch(`${base}/v1/avatars/${id}`, { headers: { Authorization: `Bearer ${key}` } });
    const body = (await reply.json()) as { status: string; code?: string };
    status = reply.ok ? body.status : `${reply.status} ${body.code}`;
    if (!statuses.includes(status)) await new Promise((res) => setTimeout(res, 25));
  }
  return status;
}

describe('a job in flight when the process is killed', () => {
  it('is resumed on the next start, ends ready and is charged once', async () => {
    const { storeEnv, key } = await storeWithAccount();
    const headers = { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' };
    const first = await startMain(storeEnv, { ENGINE_AVATAR_MS: '60000' });
    const create = await fetch(`${first.url}/v1/avatars`, { method: 'POST', headers, body: JSON.stringify(promptAvatar()) });
    const created = (await create.json()) as { id: string };
    expect(create.status, JSON.stringify(created)).toBe(202);
    const before = await pollStatus(first.url, created.id, key, ['processing'], 100);

    await first.stop('SIGKILL');
    const second = await startMain(storeEnv, { ENGINE_AVATAR_MS: '50' });
    const status = await pollStatus(second.url, created.id, key, ['ready', 'failed']);
    const me = (await (await fetch(`${second.url}/v1/me`, { headers })).json()) as { credits: Record<string, number> };

    expect(before).toBe('processing');
    expect(status).toBe('ready');
    expect(me.credits).toMatchObject({ used: 10, reserved: 0, available: 90 });
  });

  it('is handed back to the queue by a graceful stop (SIGTERM) and finished by the next start', async () => {
    const { storeEnv, key } = await storeWithAccount();
    const headers = { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' };
    const first = await startMain(storeEnv, { ENGINE_AVATAR_MS: '60000', SHUTDOWN_GRACE_MS: '100' });
    const created = (await (await fetch(`${first.url}/v1/avatars`, { method: 'POST', headers, body: JSON.stringify(promptAvatar()) })).json()) as { id: string };
    const before = await pollStatus(first.url, created.id, key, ['processing'], 100);

    const exit = new Promise((r) => first.child.once('exit', r));
    await first.stop('SIGTERM');
    const code = await exit;
    const store = await openStore(loadConfig(storeEnv.env), { serving: false });
    const handedBack = await store.jobs.getJob(created.id);
    await store.close();
    const second = await startMain(storeEnv, { ENGINE_AVATAR_MS: '10' });
    const status = await pollStatus(second.url, created.id, key, ['ready']);

    expect(before).toBe('processing');
    expect(code).toBe(0);
    expect(handedBack?.attempts).toBe(0);
    expect(status).toBe('ready');
  });
});
