// The Redis limiter judges the counts of one turn of the event loop in one script call
// per account: each request is still counted once, in order, against the windows the
// ones before it left, and a key record of an old version is refused without a count.
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomSuffix } from '../../src/domain/ids.ts';
import type { RateDecision } from '../../src/domain/model.ts';
import type { RateLimitStore } from '../../src/domain/ports.ts';
import { createRedis, redisRateLimits } from '../../src/storage/postgres-redis/redis/rateLimits.ts';
import { versionKey } from '../../src/storage/postgres-redis/redis/accountVersions.ts';
import { TEST_REDIS_URL } from '../support/stores.ts';

const prefix = `batchtest_${randomSuffix(10)}:`;
const NOW = Date.UTC(2026, 10, 2, 12, 0, 30);
let redis: Redis;
let limits: RateLimitStore;

beforeAll(async () => {
  redis = createRedis(TEST_REDIS_URL);
  // The service's client fails commands while it connects (no offline queue): wait for it, as the store does.
  if (redis.status !== 'ready') await new Promise((resolve) => redis.once('ready', resolve));
  limits = redisRateLimits(redis, prefix);
});
afterAll(async () => {
  const keys = await redis.keys(`${prefix}*`);
  if (keys.length) await redis.unlink(...keys);
  redis.disconnect();
});

const allowed = (d: RateDecision | 'stale') => d !== 'stale' && d.allowed;

describe('the Redis limiter, many requests in one turn', () => {
  it('admits exactly the limit of 300 requests sent at once, each with its own remaining, and stores the count with an expiry', async () => {
    const accountId = `acct_${randomSuffix(8)}`;
    await redis.set(versionKey(prefix, accountId), '7');
    const who = { keyId: 'key_a', accountId, version: 7 };

    const decisions = await Promise.all(Array.from({ length: 300 }, () => limits.consume(who, 'read', { minute: 120, day: 1000 }, NOW)));

    expect(decisions.filter(allowed)).toHaveLength(120);
    // In the order they were asked: the first 120 admitted, the rest refused.
    expect(decisions.slice(0, 120).every(allowed)).toBe(true);
    const remaining = decisions.slice(0, 120).map((d) => (d as RateDecision).windows.find((w) => w.window === 'minute')!.remaining);
    expect(remaining).toEqual(Array.from({ length: 120 }, (_, i) => 119 - i));
    const counters = await redis.keys(`${prefix}rl:{${accountId}}:key_a:read:*`);
    expect(counters).toHaveLength(2);
    for (const counter of counters) {
      expect(await redis.get(counter)).toBe('120');
      expect(await redis.pttl(counter)).toBeGreaterThan(0);
    }
  });

  it('refuses as stale, counting nothing, a record of an old version beside current ones of another account in the same turn', async () => {
    const [a, b] = [`acct_${randomSuffix(8)}`, `acct_${randomSuffix(8)}`];
    await redis.set(versionKey(prefix, a), '5');
    await redis.set(versionKey(prefix, b), '9');
    const plan = { minute: 10, day: 100 };

    const [stale, current, other] = await Promise.all([
      limits.consume({ keyId: 'k1', accountId: a, version: 4 }, 'read', plan, NOW),
      limits.consume({ keyId: 'k1', accountId: a, version: 5 }, 'read', plan, NOW),
      limits.consume({ keyId: 'k2', accountId: b, version: 9 }, 'read', plan, NOW),
    ]);

    expect(stale).toBe('stale');
    expect(allowed(current)).toBe(true);
    expect(allowed(other)).toBe(true);
    expect((current as RateDecision).windows[0]!.remaining).toBe(9);
    const peeked = await limits.peek({ keyId: 'k1', accountId: a }, 'read', plan, NOW);
    expect(peeked.windows[0]!.remaining).toBe(9);
  });

  it('refuses every request of the turn with the store unavailable when Redis cannot be reached', async () => {
    const down = createRedis('redis://127.0.0.1:1');
    down.on('error', () => undefined);
    const offline = redisRateLimits(down, prefix);
    const who = { keyId: 'k', accountId: 'acct_x', version: 1 };

    const outcomes = await Promise.allSettled([offline.consume(who, 'read', { minute: 1, day: 1 }, NOW), offline.consume(who, 'read', { minute: 1, day: 1 }, NOW)]);

    expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected']);
    expect(String((outcomes[0] as PromiseRejectedResult).reason.name)).toBe('StoreUnavailableError');
    down.disconnect();
  });
});
