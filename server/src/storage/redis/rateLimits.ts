// Rate limits in Redis, so that every API process counts against the same windows.
// One Lua script checks both windows and counts in both, or in neither, atomically.
import { Redis } from 'ioredis';
import type { WindowName } from '../../domain/model.ts';
import { WINDOW_MS, WINDOWS, decide, windowStart } from '../../domain/rateLimits.ts';
import { StoreUnavailableError, type RateLimitStore } from '../../domain/ports.ts';

// KEYS: one counter per window. ARGV: the limits, then each key's expiry (ms), then
// 1 to count or 0 to peek. Returns the counts before this request and 1 if admitted.
const CONSUME = `
local counts = {}
local admit = 1
for i = 1, #KEYS do
  counts[i] = tonumber(redis.call('GET', KEYS[i]) or '0')
  if counts[i] >= tonumber(ARGV[i]) then admit = 0 end
end
if ARGV[#ARGV] == '1' and admit == 1 then
  for i = 1, #KEYS do
    redis.call('INCR', KEYS[i])
    redis.call('PEXPIRE', KEYS[i], ARGV[#KEYS + i])
  end
end
counts[#KEYS + 1] = admit
return counts`;

export function createRedis(url: string): Redis {
  return new Redis(url, {
    // Fail a command at once while disconnected instead of queueing it: the request
    // gets a 503 now rather than hanging until Redis is back.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: 1000,
    connectTimeout: 2000,
    lazyConnect: false,
    retryStrategy: (times) => Math.min(times * 200, 2000),
  });
}

export function redisRateLimits(redis: Redis, prefix: string): RateLimitStore {
  async function run(keyId: string, bucket: string, limits: Record<WindowName, number>, now: number, consume: boolean) {
    // The key ID in braces keeps both windows in one hash slot on a Redis Cluster.
    const keys = WINDOWS.map((w) => `${prefix}rl:{${keyId}:${bucket}}:${w}:${windowStart(w, now)}`);
    const ttls = WINDOWS.map((w) => String(windowStart(w, now) + WINDOW_MS[w] - now + 1000));
    let reply: number[];
    try {
      reply = (await redis.eval(CONSUME, keys.length, ...keys, ...WINDOWS.map((w) => String(limits[w])), ...ttls, consume ? '1' : '0')) as number[];
    } catch (error) {
      throw new StoreUnavailableError(`Redis unavailable: ${(error as Error).message}`);
    }
    const counts = { minute: Number(reply[0]), day: Number(reply[1]) };
    return decide(limits, counts, now, consume);
  }
  return {
    consume: (keyId, bucket, limits, now) => run(keyId, bucket, limits, now, true),
    peek: (keyId, bucket, limits, now) => run(keyId, bucket, limits, now, false),
  };
}
