// Account versions in Redis, as the PostgreSQL + Redis store keeps them: a version lost
// with Redis's data never comes back as the value a kept key record was read at.
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { versionKey } from '../../src/storage/postgres-redis/redis/accountVersions.ts';
import { startTestService, type TestService } from '../support/harness.ts';

let svc: TestService;
let redis: Redis;

beforeAll(async () => {
  svc = await startTestService();
  redis = new Redis(svc.storeEnv.env.REDIS_URL!);
});
afterAll(async () => {
  redis?.disconnect();
  await svc?.dispose();
});

describe('account versions in Redis', () => {
  it('start at a random value, not at 0', async () => {
    const { api_key: key, account_id: accountId } = await svc.account();
    await svc.request('GET', '/v1/me', { key });

    const version = Number(await redis.get(versionKey(svc.storeEnv.env.REDIS_PREFIX!, accountId)));

    expect(version).toBeGreaterThan(1024);
  });

  it('when lost with Redis\'s data, make every kept record stale: the key is read again and its account starts afresh', async () => {
    const { api_key: key, account_id: accountId } = await svc.account();
    const stored = versionKey(svc.storeEnv.env.REDIS_PREFIX!, accountId);
    await svc.request('GET', '/v1/me', { key });
    const before = await redis.get(stored);
    const reads = vi.spyOn(svc.store.accounts, 'findKeyByHash');

    await redis.del(stored);
    const next = await svc.request('GET', '/v1/me', { key });

    expect(next.status).toBe(200);
    expect(reads).toHaveBeenCalledTimes(1);
    expect(await redis.get(stored)).not.toBe(before);
    reads.mockRestore();
  });
});
