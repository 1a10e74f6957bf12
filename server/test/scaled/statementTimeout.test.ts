// A statement the service gave up on is cancelled by PostgreSQL, never left to commit
// behind a caller told it failed; migrations, which may run longer, are not cut short.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type pg from 'pg';
import { createPool, migrate, STATEMENT_TIMEOUT_MS } from '../../src/storage/postgres-redis/database.ts';
import { createTestStoreEnv, type TestStoreEnv } from '../support/stores.ts';

let storeEnv: TestStoreEnv;
let pool: pg.Pool | undefined;

beforeEach(async () => {
  storeEnv = await createTestStoreEnv();
});
afterEach(async () => {
  await pool?.end();
  pool = undefined;
  await storeEnv.drop();
});

describe('the PostgreSQL pool', () => {
  it('holds each statement to the timeout on the server, shorter than the wait for it', async () => {
    pool = createPool(storeEnv.env.DATABASE_URL!);

    const { rows } = await pool.query("SELECT current_setting('statement_timeout') AS value");

    expect(rows[0].value).toBe(`${STATEMENT_TIMEOUT_MS / 1000}s`);
    expect(STATEMENT_TIMEOUT_MS).toBeLessThan(10_000);
  });

  it('has a statement past the timeout cancelled, and what it wrote rolled back', async () => {
    pool = createPool(storeEnv.env.DATABASE_URL!, { statementTimeoutMs: 100 });
    await pool.query('CREATE TABLE written (n INTEGER)');

    const error = await pool.query('WITH w AS (INSERT INTO written VALUES (1)) SELECT pg_sleep(2)').catch((e: unknown) => e as { code?: string });
    const { rows } = await pool.query('SELECT count(*)::int AS n FROM written');

    expect(error).toMatchObject({ code: '57014' }); // query_canceled
    expect(rows[0].n).toBe(0);
  });

  it('lets migrations run past the timeout', async () => {
    pool = createPool(storeEnv.env.DATABASE_URL!, { statementTimeoutMs: 1 });

    const applied = await migrate(pool);

    expect(applied.length).toBeGreaterThan(0);
  });
});
