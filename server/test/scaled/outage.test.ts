// PostgreSQL or Redis going away: requests get a clear 503 with Retry-After,
// never a hang or a 500; workers pause and resume; nothing accepted before is lost.
import { afterEach, describe, expect, it } from 'vitest';
import { promptAvatar, startTestService, type TestService } from '../support/harness.ts';
import { createTestStoreEnv, TEST_DATABASE_URL, TEST_REDIS_URL } from '../support/stores.ts';
import { startTcpProxy, type TcpProxy } from '../support/tcpProxy.ts';

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

/** A scaled service whose PostgreSQL and Redis both go through proxies the test controls. */
async function serviceBehindProxies(env: Record<string, string> = {}): Promise<{ svc: TestService; pg: TcpProxy; redis: TcpProxy }> {
  const storeEnv = await createTestStoreEnv();
  const db = new URL(TEST_DATABASE_URL);
  const rd = new URL(TEST_REDIS_URL);
  const pg = await startTcpProxy(db.hostname, Number(db.port || 5432));
  const redis = await startTcpProxy(rd.hostname, Number(rd.port || 6379));
  const dbUrl = new URL(storeEnv.env.DATABASE_URL!);
  dbUrl.port = String(pg.port);
  const redisUrl = new URL(TEST_REDIS_URL);
  redisUrl.port = String(redis.port);
  const svc = await startTestService({
    storeEnv: { env: { ...storeEnv.env, DATABASE_URL: dbUrl.toString(), REDIS_URL: redisUrl.toString() }, drop: storeEnv.drop },
    env: { JOB_LEASE_MS: '1000', ...env },
  });
  cleanup.push(storeEnv.drop, () => pg.close().catch(() => undefined), () => redis.close().catch(() => undefined), () => svc.stop());
  return { svc, pg, redis };
}

async function timed<T>(work: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await work();
  return { value, ms: performance.now() - started };
}

describe('an outage', () => {
  it('of PostgreSQL answers 503 with Retry-After at once, then recovers and loses nothing', async () => {
    const { svc, pg } = await serviceBehindProxies({ ENGINE_AVATAR_MS: '300' });
    const { api_key: key } = await svc.account();
    const accepted = await svc.request('POST', '/v1/avatars', { key, json: promptAvatar() });
    expect(accepted.status).toBe(202);

    await pg.cut();
    const during = await timed(() => svc.request('POST', '/v1/avatars', { key, json: promptAvatar() }));
    const read = await svc.request('GET', `/v1/avatars/${accepted.body.id}`, { key });
    const health = await fetch(`${svc.url}/healthz`);
    await new Promise((r) => setTimeout(r, 500)); // the worker meets the outage too
    await pg.restore();

    expect(during.value.status).toBe(503);
    expect(during.value.body.code).toBe('service_unavailable');
    expect(Number(during.value.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(during.ms).toBeLessThan(5000);
    expect(read.status).toBe(503);
    expect(health.status).toBe(503);
    const done = await svc.waitTerminal(`/v1/avatars/${accepted.body.id}`, key, 15_000);
    expect(done.status).toBe('ready');
    expect((await svc.request('GET', '/v1/me', { key })).body.credits).toMatchObject({ used: 10, reserved: 0 });
  });

  it('of Redis answers 503 with Retry-After, then recovers', async () => {
    const { svc, redis } = await serviceBehindProxies();
    const { api_key: key } = await svc.account();

    await redis.cut();
    const during = await timed(() => svc.request('GET', '/v1/me', { key }));
    await redis.restore();
    let after = during.value;
    for (let i = 0; i < 50 && after.status !== 200; i++) {
      await new Promise((r) => setTimeout(r, 100));
      after = await svc.request('GET', '/v1/me', { key });
    }

    expect(during.value.status).toBe(503);
    expect(during.value.headers.get('retry-after')).not.toBeNull();
    expect(during.ms).toBeLessThan(5000);
    expect(after.status).toBe(200);
  });
});
