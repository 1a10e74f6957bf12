import type { Redis } from 'ioredis';
import type { RateLimitStore, Store } from '../../domain/ports.ts';
import { redisAccountVersions } from './redis/accountVersions.ts';
import { redisRateLimits, createRedis } from './redis/rateLimits.ts';
import { postgresAccounts } from './accounts.ts';
import { createCompleteGroup } from './completeGroup.ts';
import { createCreateGroup } from './createGroup.ts';
import { createPool, guarded, migrate } from './database.ts';
import { postgresFiles } from './files.ts';
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

const REDIS_CONNECT_WAIT_MS = 2000;

function connected(redis: Redis, ms: number): Promise<void> {
  if (redis.status === 'ready') return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      redis.off('ready', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    redis.once('ready', done);
  });
}

/**
 * PostgreSQL for durable state (accounts, hashed keys, the credit ledger, jobs and their
 * queue, the webhook outbox, the files jobs make) and Redis for the shared rate-limit windows and the accounts' versions.
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
  // Commands fail at once while disconnected (no offline queue), so a process that served
  // before its first connection was up would refuse its first requests with 503. Wait for
  // it, as long as a connection attempt may take; a Redis that is down stays a 503 per
  // request, as during any outage, rather than a process that will not start.
  await connected(redis, REDIS_CONNECT_WAIT_MS);
  const prefix = options.redisPrefix ?? '';
  const rateLimits: RateLimitStore = redisRateLimits(redis, prefix);
  const creates = createCreateGroup(pool);
  const completions = createCompleteGroup(pool);
  return {
    accounts: postgresAccounts(pool, redisAccountVersions(redis, prefix)),
    jobs: postgresJobs(pool, { creates, completions }),
    files: postgresFiles(pool),
    outbox: postgresOutbox(pool),
    rateLimits,
    async ping() {
      await guarded(() => pool.query('SELECT 1'));
      await rateLimits.peek({ keyId: 'ping', accountId: 'ping' }, 'read', { minute: 1, day: 1 }, Date.now());
    },
    async close() {
      // The creates and completions asked before closing are answered first, as the embedded store's commit group is flushed.
      await Promise.all([creates.drain(), completions.drain()]);
      redis.disconnect();
      await pool.end();
    },
  };
}
