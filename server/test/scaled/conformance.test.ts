// The conformance runner against the scaled deployment: two API processes
// behind a round-robin balancer and two workers, on PostgreSQL + Redis, in the core
// and the contract profiles, and with generated inputs.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runConformance } from '../../../conformance/src/run.ts';
import { expectClockChecked, expectPass, expectWorkspaceChecked, keysForRun, SPENDS_DAYS } from '../../../test/e2e/support.ts';
import { loadConfig } from '../../src/config.ts';
import { systemClock } from '../../src/domain/clock.ts';
import { openStore } from '../../src/runtime.ts';
import type { Store } from '../../src/domain/ports.ts';
import { createTestStoreEnv, type TestStoreEnv } from '../support/stores.ts';
import { startServerProcess, type ServerProcess } from '../support/serverProcess.ts';
import { startTcpProxy, type TcpProxy } from '../support/tcpProxy.ts';

const children: ServerProcess[] = [];
let storeEnv: TestStoreEnv;
let store: Store;
let balancer: TcpProxy;

function start(role: 'api' | 'worker', publicBaseUrl: string): Promise<ServerProcess> {
  const started = startServerProcess({
    ...storeEnv.env, ROLE: role, LOG_LEVEL: 'warn', PUBLIC_BASE_URL: publicBaseUrl,
    ENGINE_AVATAR_MS: '200', ENGINE_VIDEO_MS: '200', JOB_POLL_MS: '50', WEBHOOK_POLL_MS: '100',
  });
  void started.then((proc) => children.push(proc), () => undefined);
  return started;
}

beforeAll(async () => {
  storeEnv = await createTestStoreEnv();
  store = await openStore(loadConfig(storeEnv.env), { serving: false });
  // The balancer listens first (on a port the OS gives) so that the APIs can name it as their public URL.
  balancer = await startTcpProxy('127.0.0.1', 9);
  const publicUrl = `http://127.0.0.1:${balancer.port}`;
  const [apiA, apiB] = await Promise.all([start('api', publicUrl), start('api', publicUrl), start('worker', publicUrl), start('worker', publicUrl)]);
  balancer.retarget({ host: '127.0.0.1', port: apiA!.port }, { host: '127.0.0.1', port: apiB!.port });
}, 60_000);

afterAll(async () => {
  await Promise.all(children.map((c) => c.stop('SIGTERM')));
  await balancer?.close();
  await store?.close();
  await storeEnv?.drop();
});

// One run at a time: the two workers render every run's videos, and three runs at once
// kept a job queued past the contract profile's 4 s for an avatar on a busy machine.
describe('the conformance runner against two API processes and two workers on PostgreSQL + Redis', () => {
  it.each([['core'], ['contract']] as const)('passes the %s profile', async (profile) => {
    const keys = await keysForRun(store, systemClock);

    // The day of each bucket is spent once per server, in the contract run.
    const leftOut = profile === 'core' ? [SPENDS_DAYS] : [];

    const report = await runConformance({ baseUrl: `http://127.0.0.1:${balancer.port}`, ...keys, profile, skip: leftOut });

    expectPass(report);
    expectClockChecked(report, leftOut);
    expectWorkspaceChecked(report);
  }, 240_000);

  it('passes 1,000 generated requests in the contract profile', async () => {
    const keys = await keysForRun(store, systemClock);

    const report = await runConformance({ baseUrl: `http://127.0.0.1:${balancer.port}`, ...keys, profile: 'contract', only: ['generated'], fuzz: 1000, seed: 2026 });

    expect(report.results.map((r) => `${r.id}: ${r.outcome}${r.failure ? ` ${JSON.stringify(r.failure)}` : ''}`)).toEqual(['generated.creates: passed', 'generated.reads: passed']);
  }, 240_000);
});
