// The workspaces migration on a store written before it: every account already there
// becomes an owner account with no workspaces, keeps its key, credits and jobs, and can
// then hold a workspace. Run on the embedded store, and on PostgreSQL in the scaled project.
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
const OLD_ROWS = [
  `INSERT INTO accounts (id, name, monthly_credits, plan, signing_secret, created_at) VALUES ('acct_before', 'Before', 500, '${PLAN}', 'whsec_x', 1)`,
  `INSERT INTO api_keys (id, account_id, mode, prefix, hash, created_at) VALUES ('key_before', 'acct_before', 'sandbox', 'sk_test_abcd', 'hash_before', 1)`,
  `INSERT INTO credit_ledger (account_id, period, granted, used) VALUES ('acct_before', '2026-11', 20, 30)`,
];

const OLD_ACCOUNT_AS_OWNER = { id: 'acct_before', name: 'Before', monthly_credits: 500, owner_id: null };

// Each store's test is registered only in the project that runs that store, as elsewhere (never skipped).
if (!scaled) describe('the embedded store, migrated to workspaces', () => {
  it('makes an account stored before the migration an owner with no workspaces, its key and credits kept', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'workspaces-migration-'));
    const file = join(dir, 'store.db');
    try {
      const workspaces = embeddedBefore(file, (sql) => sql.includes('owner_id'));
      const old = new DatabaseSync(file);
      for (const sql of OLD_ROWS) old.exec(sql);
      old.close();

      const db = openDatabase(file);
      const account = db.prepare('SELECT id, name, monthly_credits, owner_id FROM accounts').get() as Record<string, unknown>;
      const key = db.prepare('SELECT account_id FROM api_keys WHERE id = ?').get('key_before') as Record<string, unknown>;
      const ledger = db.prepare('SELECT granted, used FROM credit_ledger WHERE account_id = ?').get('acct_before') as Record<string, unknown>;
      const workspacesBefore = db.prepare('SELECT COUNT(*) AS n FROM accounts WHERE owner_id IS NOT NULL').get() as Record<string, unknown>;
      db.exec(`INSERT INTO accounts (id, name, monthly_credits, plan, signing_secret, created_at, owner_id) VALUES ('acct_ws', 'W', 10, '${PLAN}', 'whsec_y', 2, 'acct_before')`);
      const listed = db.prepare('SELECT id FROM accounts WHERE owner_id IS NOT NULL').all() as Record<string, unknown>[];
      db.close();

      expect(workspaces).toBeGreaterThan(0);
      expect({ ...account }).toEqual(OLD_ACCOUNT_AS_OWNER);
      expect(key.account_id).toBe('acct_before');
      expect({ ...ledger }).toEqual({ granted: 20, used: 30 });
      expect(Number(workspacesBefore.n)).toBe(0);
      expect(listed.map((r) => r.id)).toEqual(['acct_ws']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

if (scaled) describe('the PostgreSQL store, migrated to workspaces', () => {
  it('makes an account stored before the migration an owner with no workspaces, its key and credits kept', async () => {
    // The store as it stood before: every migration up to the workspaces', recorded as done.
    const { pool, version, drop } = await postgresBefore('workspaces');
    try {
      for (const sql of OLD_ROWS) await pool.query(sql);

      const applied = await migrate(pool);
      const account = (await pool.query('SELECT id, name, monthly_credits, owner_id FROM accounts')).rows[0];
      const key = (await pool.query("SELECT account_id FROM api_keys WHERE id = 'key_before'")).rows[0];
      const ledger = (await pool.query("SELECT granted, used FROM credit_ledger WHERE account_id = 'acct_before'")).rows[0];
      const workspacesBefore = (await pool.query('SELECT COUNT(*)::int AS n FROM accounts WHERE owner_id IS NOT NULL')).rows[0];
      await pool.query(`INSERT INTO accounts (id, name, monthly_credits, plan, signing_secret, created_at, owner_id) VALUES ('acct_ws', 'W', 10, '${PLAN}', 'whsec_y', 2, 'acct_before')`);
      const listed = (await pool.query('SELECT id FROM accounts WHERE owner_id IS NOT NULL')).rows;

      expect(applied).toContain(version);
      expect(account).toEqual(OLD_ACCOUNT_AS_OWNER);
      expect(key.account_id).toBe('acct_before');
      expect(ledger).toEqual({ granted: 20, used: 30 });
      expect(workspacesBefore.n).toBe(0);
      expect(listed.map((r) => r.id)).toEqual(['acct_ws']);
    } finally {
      await drop();
    }
  });
});
