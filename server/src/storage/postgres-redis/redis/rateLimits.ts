// Rate limits in Redis, so that every API process counts against the same windows.
// One Lua script checks both windows and counts in both, or in neither, atomically, for
// each request it is given: the requests of one account that one turn of the event loop
// counts go to Redis as one script call, judged in order inside it.
import { Redis } from 'ioredis';
import type { RateDecision, WindowLimits, WindowName } from '../../../domain/model.ts';
import { WINDOW_MS, WINDOWS, decide, windowStart } from '../../../domain/rateLimits.ts';
import { StoreUnavailableError, type RateLimitStore } from '../../../domain/ports.ts';
import { versionKey } from './accountVersions.ts';
import { replyWithin } from './replyWithin.ts';

// ARGV[1]: the number of windows (W). Then, per request, W + 1 KEYS (one counter per
// window, then the account's version) and 2W + 2 ARGV (the limits, then each counter's
// expiry (ms), then the version the caller read its limits at ('' to not check), then 1
// to count or 0 to peek). Returns W + 1 numbers per request: the counts before it and 1
// if admitted (0 if not), or -1 and W zeros, counting nothing, when the account's version
// has moved on or is gone (accountVersions.ts).
//
// The requests are judged one after another, each seeing the counts the ones before it
// left, exactly as one script call each would (a script runs alone in Redis, so nothing
// comes between them). Each key is read once and written once at the end, by what the
// batch added, with the longest expiry asked for: the same counters and expiries, with
// one read and one write of a key per batch instead of per request.
const CONSUME = `
local windows = tonumber(ARGV[1])
local requests = #KEYS / (windows + 1)
local counts, added, expiry, versions, out = {}, {}, {}, {}, {}
for r = 0, requests - 1 do
  local k = r * (windows + 1)
  local a = 2 + r * (2 * windows + 2)
  local expected = ARGV[a + 2 * windows]
  local stale = false
  if expected ~= '' then
    local vkey = KEYS[k + windows + 1]
    local version = versions[vkey]
    if version == nil then
      version = redis.call('GET', vkey)
      versions[vkey] = version
    end
    if not version or tonumber(version) ~= tonumber(expected) then stale = true end
  end
  if stale then
    out[k + 1] = -1
    for i = 2, windows + 1 do out[k + i] = 0 end
  else
    local admit = 1
    for i = 1, windows do
      local key = KEYS[k + i]
      local c = counts[key]
      if c == nil then
        c = tonumber(redis.call('GET', key) or '0')
        counts[key] = c
      end
      out[k + i] = c
      if c >= tonumber(ARGV[a + i - 1]) then admit = 0 end
    end
    if ARGV[a + 2 * windows + 1] == '1' and admit == 1 then
      for i = 1, windows do
        local key = KEYS[k + i]
        counts[key] = counts[key] + 1
        added[key] = (added[key] or 0) + 1
        local ttl = tonumber(ARGV[a + windows + i - 1])
        if expiry[key] == nil or ttl > expiry[key] then expiry[key] = ttl end
      end
    end
    out[k + windows + 1] = admit
  end
end
for key, n in pairs(added) do
  redis.call('INCRBY', key, n)
  redis.call('PEXPIRE', key, expiry[key])
end
return out`;

/** The script's name as a command of the client; sent at once, not through auto-pipelining (see createRedis). */
const CONSUME_COMMAND = 'avatarServiceConsume';

/**
 * The most requests one script call judges. A call runs alone in Redis, so a bound keeps
 * any one from holding it long; more requests than this in one turn go in several calls.
 */
const MAX_BATCH = 256;

export function createRedis(url: string): Redis {
  return new Redis(url, {
    // Fail a command at once while disconnected instead of queueing it: the request
    // gets a 503 now rather than hanging until Redis is back.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    // No commandTimeout: its timer fails replies that wait unread after the event loop was
    // held up. Each call is bounded by replyWithin instead.
    connectTimeout: 2000,
    // The commands of one turn of the event loop go to Redis in one write, and its
    // replies come back in one read: one system call each way for many commands rather
    // than one per command. Each command keeps its own reply.
    enableAutoPipelining: true,
    // The limiter gathers the counts of a turn into one call itself: pipelining that call
    // again would only hold it back one more turn, in a pipeline of one.
    autoPipeliningIgnoredCommands: [CONSUME_COMMAND],
    lazyConnect: false,
    retryStrategy: (times) => Math.min(times * 200, 2000),
  });
}

/** One request waiting for its account's next script call. */
interface Pending {
  keyId: string;
  bucket: string;
  limits: WindowLimits;
  now: number;
  /** The version its key record was read at, or null to count (or peek) without a check. */
  version: number | null;
  /** False for a peek. */
  counting: boolean;
  resolve(decision: RateDecision | 'stale'): void;
  reject(error: Error): void;
}

export function redisRateLimits(redis: Redis, prefix: string): RateLimitStore {
  // Sent by its SHA1 (EVALSHA), and in full only when Redis does not know it yet: the
  // script is not hashed and compiled again on every call.
  redis.defineCommand(CONSUME_COMMAND, { lua: CONSUME });
  const consume = (redis as unknown as Record<typeof CONSUME_COMMAND, (keys: number, ...args: string[]) => Promise<number[]>>)[CONSUME_COMMAND].bind(redis);
  const WINDOW_COUNT = String(WINDOWS.length);

  // Requests wait by account: the account ID is the hash tag of all their keys, so one
  // call's keys share a hash slot, as a Redis Cluster requires of a script.
  let waiting = new Map<string, Pending[]>();
  let scheduled = false;

  function send(accountId: string, batch: Pending[]): void {
    const keys: string[] = [];
    const args: string[] = [WINDOW_COUNT];
    // The account ID in braces keeps the windows and the account's version in one hash slot on a Redis Cluster.
    const account = `${prefix}rl:{${accountId}}:`;
    const version = versionKey(prefix, accountId);
    for (const p of batch) {
      for (const w of WINDOWS) keys.push(`${account}${p.keyId}:${p.bucket}:${w}:${windowStart(w, p.now)}`);
      keys.push(version);
      for (const w of WINDOWS) args.push(String(p.limits[w]));
      for (const w of WINDOWS) args.push(String(windowStart(w, p.now) + WINDOW_MS[w] - p.now + 1000));
      args.push(p.version === null ? '' : String(p.version), p.counting ? '1' : '0');
    }
    replyWithin(consume(keys.length, ...keys, ...args)).then(
      (reply) => {
        const width = WINDOWS.length + 1;
        for (let i = 0; i < batch.length; i++) {
          const p = batch[i]!;
          const at = i * width;
          if (Number(reply[at]) === -1) {
            p.resolve('stale');
            continue;
          }
          const counts = {} as Record<WindowName, number>;
          WINDOWS.forEach((w, j) => (counts[w] = Number(reply[at + j])));
          p.resolve(decide(p.limits, counts, p.now, p.counting));
        }
      },
      (error: unknown) => {
        const unavailable = new StoreUnavailableError(`Redis unavailable: ${(error as Error).message}`);
        for (const p of batch) p.reject(unavailable);
      },
    );
  }

  function flush(): void {
    scheduled = false;
    const due = waiting;
    waiting = new Map();
    for (const [accountId, batch] of due) send(accountId, batch);
  }

  function run(who: { keyId: string; accountId: string }, bucket: string, limits: WindowLimits, now: number, version: number | null, counting: boolean): Promise<RateDecision | 'stale'> {
    return new Promise((resolve, reject) => {
      let batch = waiting.get(who.accountId);
      if (!batch) waiting.set(who.accountId, (batch = []));
      batch.push({ keyId: who.keyId, bucket, limits, now, version, counting, resolve, reject });
      if (batch.length >= MAX_BATCH) {
        waiting.delete(who.accountId);
        send(who.accountId, batch);
      }
      // After this turn's I/O callbacks, as auto-pipelining does: the requests read in
      // this turn are counted in it, together.
      if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
    });
  }
  return {
    consume: (who, bucket, limits, now) => run(who, bucket, limits, now, who.version, true),
    async peek(who, bucket, limits, now) {
      const decision = await run(who, bucket, limits, now, null, false);
      if (decision === 'stale') throw new Error('a peek never checks a version');
      return decision;
    },
  };
}
