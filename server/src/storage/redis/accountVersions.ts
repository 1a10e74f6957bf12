// Account versions in Redis, for the key records every API process keeps between
// requests. The limiter's script compares a record's version with the account's as it
// counts the request (redis/rateLimits.ts), so a change made through any process is seen
// by every other on its very next request, at no extra round trip.
import type { Redis } from 'ioredis';
import { StoreUnavailableError } from '../../domain/ports.ts';

export interface AccountVersions {
  /** The account's version; read after the account itself (see `changing`). */
  current(accountId: string): Promise<number>;
  /**
   * Runs `change` (a write to PostgreSQL) between two moves of the account's version. The
   * first makes every record kept so far stale; the second, a record read while the change
   * was being committed. If the second fails, the change stands and the error says so;
   * the few records read in that instant live at most as long as a record may.
   */
  changing<T>(accountId: string, change: () => Promise<T>): Promise<T>;
}

/** The Redis key of an account's version. Its hash tag is the limiter's, so one script can read both on a cluster. */
export const versionKey = (prefix: string, accountId: string) => `${prefix}acct:{${accountId}}:version`;

export function redisAccountVersions(redis: Redis, prefix: string): AccountVersions {
  async function bump(accountId: string, when: string): Promise<void> {
    try {
      await redis.incr(versionKey(prefix, accountId));
    } catch (error) {
      throw new StoreUnavailableError(`Redis unavailable ${when} changing account ${accountId}: ${(error as Error).message}`);
    }
  }
  return {
    async current(accountId) {
      try {
        return Number((await redis.get(versionKey(prefix, accountId))) ?? 0);
      } catch (error) {
        throw new StoreUnavailableError(`Redis unavailable: ${(error as Error).message}`);
      }
    },
    async changing(accountId, change) {
      await bump(accountId, 'before');
      const result = await change();
      await bump(accountId, 'after');
      return result;
    },
  };
}
