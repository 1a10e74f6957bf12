// The migration that numbers the delivery log's attempts, on a store written before it:
// an attempt logged before keeps the number its place gave it, event by event, and the
// log then reads the same as before. Run on the embedded store, and on PostgreSQL in the
// scaled project.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/storage/embedded/database.ts';
import { migrate } from '../../src/storage/postgres-redis/database.ts';
import { embeddedBefore, postgresBefore } from '../support/migrations.ts';
import { scaled } from '../support/stores.ts';

const PLAN = JSON.stringify({ read: { minute: 120, day: 10_000 }, generation: { minute: 10, day: 300 } });
/** Two events whose attempts were logged in turn: a, b, a, a, b. */
const OLD_ROWS = (sandbox: string) => [
  `INSERT INTO accounts (id, name, monthly_credits, plan, signing_secret, created_at) VALUES ('acct_before', 'Before', 500, '${PLAN}', 'whsec_x', 1)`,
  `INSERT INTO jobs (id, kind, account_id, key_id, sandbox, status, input, credits, period, created_at, updated_at)
   VALUES ('av_before', 'avatar', 'acct_before', 'key_before', ${sandbox}, 'ready', '{}', 1, '2026-11', 1, 1)`,
  ...['a', 'b'].map(
    (e) => `INSERT INTO webhook_events (id, type, job_id, account_id, url, payload, status, attempts, next_attempt_at, created_at)
     VALUES ('evt_${e}', 'avatar.ready', 'av_before', 'acct_before', 'https://h.example/x', '{}', 'failed', 3, 0, 1)`,
  ),
  ...['a', 'b', 'a', 'a', 'b'].map(
    (e, i) => `INSERT INTO webhook_attempts (event_id, trigger, started_at, duration_ms, status_code, error) VALUES ('evt_${e}', 'scheduled', ${i + 1}, 1, 500, 'status 500')`,
  ),
];
const NUMBERED = [
  { event_id: 'evt_a', started_at: 1, number: 1 },
  { event_id: 'evt_a', started_at: 3, number: 2 },
  { event_id: 'evt_a', started_at: 4, number: 3 },
  { event_id: 'evt_b', started_at: 2, number: 1 },
  { event_id: 'evt_b', started_at: 5, number: 2 },
];
const NUMBERS = 'SELECT event_id, started_at, number FROM webhook_attempts ORDER BY event_id, id';

// Each store's test is registered only in the project that runs that store, as elsewhere (never skipped).
if (!scaled) describe('the embedded store, migrated to numbered attempts', () => {
  it('numbers each attempt logged before by its place among its event\'s', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'attempt-numbers-migration-'));
    const file = join(dir, 'store.db');
    try {
      const numbered = embeddedBefore(file, (sql) => sql.includes('ADD COLUMN number'));
      const old = new DatabaseSync(file);
      for (const sql of OLD_ROWS('1')) old.exec(sql);
      old.close();

      const db = openDatabase(file);
      const rows = (db.prepare(NUMBERS).all() as Record<string, unknown>[]).map((r) => ({ ...r }));
      db.close();

      expect(numbered).toBeGreaterThan(0);
      expect(rows).toEqual(NUMBERED);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

if (scaled) describe('the PostgreSQL store, migrated to numbered attempts', () => {
  it('numbers each attempt logged before by its place among its event\'s', async () => {
    const { pool, version, drop } = await postgresBefore('attempts numbered');
    try {
      for (const sql of OLD_ROWS('true')) await pool.query(sql);

      const applied = await migrate(pool);
      const rows = (await pool.query(NUMBERS)).rows.map((r) => ({ ...r, started_at: Number(r.started_at) }));

      expect(applied).toContain(version);
      expect(rows).toEqual(NUMBERED);
    } finally {
      await drop();
    }
  });
});
