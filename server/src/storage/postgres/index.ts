import type { Redis } from 'ioredis';
import type { RateLimitStore, Store } from '../../domain/ports.ts';
import { redisAccountVersions } from '../redis/accountVersions.ts';
import { redisRateLimits, createRedis } from '../redis/rateLimits.ts';
import { postgresAccounts } from './accounts.ts';
import { postgresBulk } from './bulk.ts';
import { createPool, guarded, migrate } from './database.ts';
import { postgresJobs } from './jobs.ts';
import { postgresOutbox } from './outbox.ts';

export interface PostgresRedisStoreOptions {
  databaseUrl: string;
  redisUrl: string;
  /** Prefix of every Redis key, so several deployments (or test runs) can share one Redis. */
  redisPrefix?: string;
  /** Apply pending migrations before returning (default); `npm run migrate` does it on its own. */
  migrate?: boolean;
}

/**
 * PostgreSQL for durable state (accounts, hashed keys, the credit ledger, jobs and their
 * queue, the webhook outbox) and Redis for the shared rate-limit windows and the accounts' versions.
 */
export async function createPostgresRedisStore(options: PostgresRedisStoreOptions): Promise<Store> {
  const pool = createPool(options.databaseUrl);
  if (options.migrate ?? true) {
    // A pool left open here would keep a refused operator command alive until its idle timeout.
    await migrate(pool).catch(async (error: unknown) => {
      await pool.end();
      throw error;
    });
  }
  const redis: Redis = createRedis(options.redisUrl);
  redis.on('error', () => undefined); // reported per command as StoreUnavailableError
  const prefix = options.redisPrefix ?? '';
  const rateLimits: RateLimitStore = redisRateLimits(redis, prefix);
  return {
    accounts: postgresAccounts(pool, redisAccountVersions(redis, prefix)),
    jobs: postgresJobs(pool),
    outbox: postgresOutbox(pool),
    bulk: postgresBulk(pool),
    rateLimits,
    async ping() {
      await guarded(() => pool.query('SELECT 1'));
      await rateLimits.peek({ keyId: 'ping', accountId: 'ping' }, 'read', { minute: 1, day: 1 }, Date.now());
    },
    async close() {
      redis.disconnect();
      await pool.end();
    },
  };
}
