// An account whose sandbox clock a store kept past the cap on account time, moved before
// the cap existed (ND-SANDBOX-CLOCK), is brought back to the cap when the store migrates:
// its time is RFC 3339 again and its calls answer, where past JavaScript's last date
// every one of them failed.
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { createAccount } from '../../src/domain/accounts.ts';
import { MAX_OFFSET_SECONDS } from '../../src/domain/sandboxClock.ts';
import type { Store } from '../../src/domain/ports.ts';
import { EMBEDDED_FILE, openStore } from '../../src/runtime.ts';
import { MIGRATIONS as EMBEDDED_MIGRATIONS } from '../../src/storage/embedded/schema.ts';
import { MIGRATIONS as POSTGRES_MIGRATIONS } from '../../src/storage/postgres-redis/migrations.ts';
import { fakeClock } from '../support/clock.ts';
import { scaled, createTestStoreEnv, type TestStoreEnv } from '../support/stores.ts';

/** Past JavaScript's last date (8.64e15 ms after 1970) from any real time. */
const BEYOND_MS = 9e15;

let storeEnv: TestStoreEnv;
let store: Store;

beforeEach(async () => {
  storeEnv = await createTestStoreEnv();
  store = await openStore(loadConfig(storeEnv.env), { serving: false });
});
afterEach(async () => {
  await store.close();
  await storeEnv.drop();
});

/**
 * Writes the offset as a store from before the cap could have kept it, then runs the cap's
 * migration on it as the store's migrate would have (later migrations are left as they ran).
 */
async function keptFromBefore(accountId: string, offsetMs: number): Promise<void> {
  await store.close();
  if (scaled) {
    const client = new pg.Client({ connectionString: storeEnv.env.DATABASE_URL });
    await client.connect();
    await client.query('UPDATE accounts SET clock_offset_ms = $1 WHERE id = $2', [offsetMs, accountId]);
    await client.query(POSTGRES_MIGRATIONS.find((m) => m.name === 'account time cap')!.sql);
    await client.end();
  } else {
    const db = new DatabaseSync(join(storeEnv.env.DATA_DIR!, EMBEDDED_FILE));
    db.prepare('UPDATE accounts SET clock_offset_ms = ? WHERE id = ?').run(offsetMs, accountId);
    db.exec(EMBEDDED_MIGRATIONS.find((sql) => sql.includes('The cap on an account'))!);
    db.close();
  }
  store = await openStore(loadConfig(storeEnv.env), { serving: false });
}

describe('the migration to the cap on account time', () => {
  it('brings a clock kept past the cap back to it, and leaves one within it alone', async () => {
    const clock = fakeClock();
    const { account_id: beyond } = await createAccount(store, clock, {});
    const { account_id: within } = await createAccount(store, clock, {});
    await store.accounts.advanceClock(within, { byMs: 86_400_000 }, MAX_OFFSET_SECONDS * 1000);

    await keptFromBefore(beyond, BEYOND_MS);

    expect((await store.accounts.getAccount(beyond))?.clockOffsetMs).toBe(MAX_OFFSET_SECONDS * 1000);
    expect((await store.accounts.getAccount(within))?.clockOffsetMs).toBe(86_400_000);
  });
});
