// The conformance runner against the scaled deployment: two API processes
// behind a round-robin balancer and two workers, on PostgreSQL + Redis, in the core
// and the contract profiles.
import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { runConformance } from '../../../conformance/src/run.ts';
import { expectClockChecked, expectPass, keysForRun } from '../../../test/e2e/support.ts';
import { loadConfig } from '../../src/config.ts';
import { systemClock } from '../../src/domain/clock.ts';
import { openStore } from '../../src/runtime.ts';
import type { Store } from '../../src/storage/ports.ts';
import { createTestStoreEnv, type TestStoreEnv } from '../support/stores.ts';
import { startTcpProxy, type TcpProxy } from '../support/tcpProxy.ts';

const MAIN = new URL('../../src/main.ts', import.meta.url).pathname;
const children: ChildProcess[] = [];
let storeEnv: TestStoreEnv;
let store: Store;
let balancer: TcpProxy;

async function start(role: 'api' | 'worker', port: number, publicBaseUrl: string): Promise<void> {
  const child = spawn(process.execPath, [MAIN], {
    env: {
      ...process.env, ...storeEnv.env, ROLE: role, PORT: String(port), LOG_LEVEL: 'warn', PUBLIC_BASE_URL: publicBaseUrl,
      ENGINE_AVATAR_MS: '200', ENGINE_VIDEO_MS: '200', JOB_POLL_MS: '50', WEBHOOK_POLL_MS: '100',
    },
    stdio: 'ignore',
  });
  children.push(child);
  for (let i = 0; i < 300; i++) {
    try {
      if ((await fetch(`http://127.0.0.1:${port}/healthz`)).ok) return;
    } catch {
      /* not yet */
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${role} on ${port} did not start`);
}

beforeAll(async () => {
  storeEnv = await createTestStoreEnv();
  store = await openStore(loadConfig(storeEnv.env), { serving: false });
  const base = 31_000 + Math.floor(Math.random() * 9000);
  balancer = await startTcpProxy('127.0.0.1', base, { host: '127.0.0.1', port: base + 1 });
  const publicUrl = `http://127.0.0.1:${balancer.port}`;
  await Promise.all([start('api', base, publicUrl), start('api', base + 1, publicUrl), start('worker', base + 2, publicUrl), start('worker', base + 3, publicUrl)]);
}, 60_000);

afterAll(async () => {
  for (const c of children) c.kill('SIGTERM');
  await balancer?.close();
  await store?.close();
  await storeEnv?.drop();
});

describe.concurrent('the conformance runner against two API processes and two workers on PostgreSQL + Redis', () => {
  it.each([['core'], ['contract']] as const)('passes the %s profile', async (profile) => {
    const keys = await keysForRun(store, systemClock);

    const report = await runConformance({ baseUrl: `http://127.0.0.1:${balancer.port}`, ...keys, profile });

    expectPass(report);
    expectClockChecked(report);
  }, 240_000);
});
