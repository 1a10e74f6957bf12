// Account versions in Redis, for the key records every API process keeps between
// requests. The limiter's script compares a record's version with the account's as it
// counts the request (redis/rateLimits.ts), so a change made through any process is seen
// by every other on its very next request, at no extra round trip.
import type { Redis } from 'ioredis';
import { StoreUnavailableError } from '../../../domain/ports.ts';
import { replyWithin } from './replyWithin.ts';

export interface AccountVersions {
  /** The account's version. Read before the account itself: see findKeyByHash. */
  current(accountId: string): Promise<number>;
  /**
   * Runs `change` (a write to PostgreSQL) between two moves of the account's version. The
   * first makes every record kept so far stale; the second, a record read while the change
   * was being committed.
   */
  changing<T>(accountId: string, change: () => Promise<T>): Promise<T>;
}

/** The Redis key of an account's version. Its hash tag is the limiter's, so one script can read both on a cluster. */
export const versionKey = (prefix: string, accountId: string) => `${prefix}acct:{${accountId}}:version`;

/**
 * Where an account's version starts: a random number, not 0, so that a version lost
 * with Redis's data (a restart without persistence, an eviction, a failover) never comes
 * back as a value an old record was kept at. The limiter's script treats a missing
 * version as stale, and the next read starts the account afresh here.
 */
const freshBase = () => String(Math.floor(Math.random() * 2 ** 40) * 1024);

/** The reply of a transaction's second command (after the SET NX that starts a version), or its error. */
function replyOf(replies: [Error | null, unknown][] | null): unknown {
  const [error, reply] = replies?.[1] ?? [new Error('the transaction was discarded'), null];
  if (error) throw error;
  return reply;
}

export function redisAccountVersions(redis: Redis, prefix: string): AccountVersions {
  const unavailable = (error: unknown) => new StoreUnavailableError(`Redis unavailable: ${(error as Error).message}`);
  async function bump(accountId: string): Promise<void> {
    const key = versionKey(prefix, accountId);
    try {
      replyOf(await replyWithin(redis.multi().set(key, freshBase(), 'NX').incr(key).exec()));
    } catch (error) {
      throw unavailable(error);
    }
  }
  return {
    async current(accountId) {
      const key = versionKey(prefix, accountId);
      try {
        return Number(replyOf(await replyWithin(redis.multi().set(key, freshBase(), 'NX').get(key).exec())));
      } catch (error) {
        throw unavailable(error);
      }
    },
    async changing(accountId, change) {
      await bump(accountId);
      const result = await change();
      // The change is committed: a failure now must not tell the caller it was not (a
      // retried clock move would move twice). The first move already made every record
      // kept before stale; one read during the commit lives at most as long as a record may.
      await bump(accountId).catch(() => undefined);
      return result;
    },
  };
}
