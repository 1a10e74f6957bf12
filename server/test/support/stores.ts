// Which store the server tests run on: the embedded one by default, PostgreSQL + Redis
// when TEST_STORE=scaled (the "scaled" Vitest project, whose global setup,
// scaledServices.ts, provides the servers). Each test service gets a store of its own:
// a temp folder, or a PostgreSQL schema plus a Redis key prefix.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import pg from 'pg';
import { inject } from 'vitest';
import { randomSuffix } from '../../src/domain/ids.ts';
import { createPool } from '../../src/storage/postgres-redis/database.ts';

export const scaled = process.env.TEST_STORE === 'scaled';

/** The scaled project's servers; the embedded project has none, and its tests never ask. */
export const TEST_DATABASE_URL = scaled ? inject('testDatabaseUrl') : 'postgres://unused.invalid/';
export const TEST_REDIS_URL = scaled ? inject('testRedisUrl') : 'redis://unused.invalid';

export interface TestStoreEnv {
  /** Environment variables that point a server at this store. */
  env: Record<string, string>;
  drop(): Promise<void>;
}

export async function createTestStoreEnv(): Promise<TestStoreEnv> {
  if (!scaled) {
    const dir = mkdtempSync(join(tmpdir(), 'avatar-test-'));
    return { env: { DATA_DIR: dir }, drop: async () => rmSync(dir, { recursive: true, force: true }) };
  }
  const schema = `t_${randomSuffix(12)}`;
  const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  await admin.end();
  const url = new URL(TEST_DATABASE_URL);
  url.searchParams.set('options', `-c search_path=${schema}`);
  const prefix = `${schema}:`;
  return {
    env: { DATABASE_URL: url.toString(), REDIS_URL: TEST_REDIS_URL, REDIS_PREFIX: prefix },
    async drop() {
      const c = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await c.connect();
      try {
        // A deadlock is PostgreSQL ending one of two transactions so the other goes on
        // (a dropped table against a statement still finishing on it): the drop is
        // tried again, as its documentation says such a transaction is.
        for (let attempt = 1; ; attempt++) {
          try {
            await c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
            break;
          } catch (error) {
            if ((error as { code?: string }).code !== '40P01' || attempt === 3) throw error;
          }
        }
      } finally {
        await c.end();
      }
      const redis = new Redis(TEST_REDIS_URL);
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length) await redis.del(...keys);
      redis.disconnect();
    },
  };
}

export interface PostgresSchema {
  /** Its name, as information_schema names it. */
  schema: string;
  /** A pool whose search_path is the schema alone. */
  pool: pg.Pool;
  /** Ends the pool and drops the schema. */
  drop(): Promise<void>;
}

/** An empty PostgreSQL schema of its own on the scaled project's server, for a test that writes tables by hand. */
export async function postgresSchema(): Promise<PostgresSchema> {
  const schema = `t_${randomSuffix(12)}`;
  const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  const url = new URL(TEST_DATABASE_URL);
  url.searchParams.set('options', `-c search_path=${schema}`);
  const pool = createPool(url.toString());
  return {
    schema,
    pool,
    async drop() {
      await pool.end();
      await admin.query(`DROP SCHEMA ${schema} CASCADE`);
      await admin.end();
    },
  };
}
