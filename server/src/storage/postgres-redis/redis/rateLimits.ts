// Rate limits in Redis, so that every API process counts against the same windows.
// One Lua script checks both windows and counts in both, or in neither, atomically.
import { Redis } from 'ioredis';
import type { WindowName } from '../../../domain/model.ts';
import { WINDOW_MS, WINDOWS, decide, windowStart } from '../../../domain/rateLimits.ts';
import { StoreUnavailableError, type RateLimitStore } from '../../../domain/ports.ts';
import { versionKey } from './accountVersions.ts';

// KEYS: one counter per window, then the account's version. ARGV: the limits, then each
// counter's expiry (ms), then the version the caller read its limits at ('' to not
// check), then 1 to count or 0 to peek. Returns the counts before this request and 1 if
// admitted, or -1 alone, counting nothing, when the account's version has moved on or
// is gone (accountVersions.ts).
const CONSUME = `
local windows = #KEYS - 1
local expected = ARGV[2 * windows + 1]
if expected ~= '' then
  local version = redis.call('GET', KEYS[#KEYS])
  if not version or tonumber(version) ~= tonumber(expected) then return {-1} end
end
local counts = {}
local admit = 1
for i = 1, windows do
  counts[i] = tonumber(redis.call('GET', KEYS[i]) or '0')
  if counts[i] >= tonumber(ARGV[i]) then admit = 0 end
end
if ARGV[#ARGV] == '1' and admit == 1 then
  for i = 1, windows do
    redis.call('INCR', KEYS[i])
    redis.call('PEXPIRE', KEYS[i], ARGV[windows + i])
  end
end
counts[windows + 1] = admit
return counts`;

export function createRedis(url: string): Redis {
  return new Redis(url, {
    // Fail a command at once while disconnected instead of queueing it: the request
    // gets a 503 now rather than hanging until Redis is back.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: 1000,
    connectTimeout: 2000,
    // The commands of one turn of the event loop (the counts of the requests read
    // together) go to Redis in one write, and its replies come back in one read: one
    // system call each way for many requests rather than one per command. Each command
    // keeps its own timeout and its own reply.
    enableAutoPipelining: true,
    lazyConnect: false,
    retryStrategy: (times) => Math.min(times * 200, 2000),
  });
}

export function redisRateLimits(redis: Redis, prefix: string): RateLimitStore {
  // Sent by its SHA1 (EVALSHA), and in full only when Redis does not know it yet: the
  // script is not hashed and compiled again on every request.
  redis.defineCommand('avatarServiceConsume', { lua: CONSUME });
  const consume = (redis as unknown as { avatarServiceConsume(keys: number, ...args: string[]): Promise<number[]> }).avatarServiceConsume.bind(redis);
  async function run(who: { keyId: string; accountId: string }, bucket: string, limits: Record<WindowName, number>, now: number, version: number | null) {
    // The account ID in braces keeps the windows and the account's version in one hash slot on a Redis Cluster.
    const keys = WINDOWS.map((w) => `${prefix}rl:{${who.accountId}}:${who.keyId}:${bucket}:${w}:${windowStart(w, now)}`);
    const ttls = WINDOWS.map((w) => String(windowStart(w, now) + WINDOW_MS[w] - now + 1000));
    let reply: number[];
    try {
      reply = await consume(
        keys.length + 1, ...keys, versionKey(prefix, who.accountId),
        ...WINDOWS.map((w) => String(limits[w])), ...ttls, version === null ? '' : String(version), version === null ? '0' : '1',
      );
    } catch (error) {
      throw new StoreUnavailableError(`Redis unavailable: ${(error as Error).message}`);
    }
    if (Number(reply[0]) === -1) return 'stale' as const;
    const counts = { minute: Number(reply[0]), day: Number(reply[1]) };
    return decide(limits, counts, now, version !== null);
  }
  return {
    consume: (who, bucket, limits, now) => run(who, bucket, limits, now, who.version),
    async peek(who, bucket, limits, now) {
      const decision = await run(who, bucket, limits, now, null);
      if (decision === 'stale') throw new Error('a peek never checks a version');
      return decision;
    },
  };
}
