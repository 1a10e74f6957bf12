// A job in flight when the process dies is resumed on the next start and charged once.
// The process is a real `node server/src/main.ts`, killed with SIGKILL.
import { spawn, type ChildProcess } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { createAccount } from '../../src/domain/accounts.ts';
import { systemClock } from '../../src/domain/clock.ts';
import { openStore } from '../../src/runtime.ts';
import { promptAvatar } from '../support/harness.ts';
import { createTestStoreEnv, type TestStoreEnv } from '../support/stores.ts';

const MAIN = new URL('../../src/main.ts', import.meta.url).pathname;
const children: ChildProcess[] = [];
const stores: TestStoreEnv[] = [];

afterEach(async () => {
  for (const c of children.splice(0)) c.kill('SIGKILL');
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

async function startMain(storeEnv: TestStoreEnv, port: number, env: Record<string, string>): Promise<ChildProcess> {
  const child = spawn(process.execPath, [MAIN], {
    env: { ...process.env, ...storeEnv.env, PORT: String(port), LOG_LEVEL: 'warn', JOB_POLL_MS: '50', JOB_LEASE_MS: '1500', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline) {
    try {
      if ((await fetch(`http://127.0.0.1:${port}/healthz`)).ok) return child;
    } catch {
      /* not listening yet */
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('server did not start');
}

const freePort = () => 20_000 + Math.floor(Math.random() * 20_000);

describe('a job in flight when the process is killed', () => {
  it('is resumed on the next start, ends ready and is charged once', async () => {
    const { storeEnv, key } = await storeWithAccount();
    const port = freePort();
    const base = `http://127.0.0.1:${port}`;
    const headers = { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' };

    const first = await startMain(storeEnv, port, { ENGINE_AVATAR_MS: '60000' });
    const created = (await (await fetch(`${base}/v1/avatars`, { method: 'POST', headers, body: JSON.stringify(promptAvatar()) })).json()) as { id: string };
    for (let i = 0; i < 100; i++) {
      const r = (await (await fetch(`${base}/v1/avatars/${created.id}`, { headers })).json()) as { status: string };
      if (r.status === 'processing') break;
      await new Promise((res) => setTimeout(res, 20));
    }
    first.kill('SIGKILL');
    await new Promise((r) => first.once('exit', r));

    await startMain(storeEnv, port, { ENGINE_AVATAR_MS: '50' });
    let avatar: { status: string } = { status: '' };
    for (let i = 0; i < 200 && avatar.status !== 'ready' && avatar.status !== 'failed'; i++) {
      avatar = (await (await fetch(`${base}/v1/avatars/${created.id}`, { headers })).json()) as { status: string };
      await new Promise((res) => setTimeout(res, 25));
    }
    const me = (await (await fetch(`${base}/v1/me`, { headers })).json()) as { credits: Record<string, number> };

    expect(avatar.status).toBe('ready');
    expect(me.credits).toMatchObject({ used: 10, reserved: 0, available: 90 });
  });

  it('is handed back to the queue by a graceful stop (SIGTERM) and finished by the next start', async () => {
    const { storeEnv, key } = await storeWithAccount();
    const port = freePort();
    const base = `http://127.0.0.1:${port}`;
    const headers = { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' };

    const first = await startMain(storeEnv, port, { ENGINE_AVATAR_MS: '60000', SHUTDOWN_GRACE_MS: '100' });
    const created = (await (await fetch(`${base}/v1/avatars`, { method: 'POST', headers, body: JSON.stringify(promptAvatar()) })).json()) as { id: string };
    await new Promise((r) => setTimeout(r, 300));
    first.kill('SIGTERM');
    const code = await new Promise((r) => first.once('exit', r));

    const store = await openStore(loadConfig(storeEnv.env), { serving: false });
    const handedBack = await store.jobs.getJob(created.id);
    await store.close();
    await startMain(storeEnv, port, { ENGINE_AVATAR_MS: '10' });
    let status = '';
    for (let i = 0; i < 200 && status !== 'ready'; i++) {
      status = ((await (await fetch(`${base}/v1/avatars/${created.id}`, { headers })).json()) as { status: string }).status;
      await new Promise((res) => setTimeout(res, 25));
    }

    expect(code).toBe(0);
    expect(handedBack?.attempts).toBe(0);
    expect(status).toBe('ready');
  });
});
