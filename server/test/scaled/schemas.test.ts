// The two stores write the same tables in two SQL dialects: this holds them together.
// Each has one table the other keeps elsewhere, named here with the reason.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/storage/embedded/database.ts';
import { migrate } from '../../src/storage/postgres-redis/database.ts';
import { postgresSchema } from '../support/stores.ts';

/** Tables only one store has: the other keeps the same thing outside its database. */
const ONLY_EMBEDDED = ['rate_counters']; // PostgreSQL deployments count requests in Redis
const ONLY_POSTGRES = [
  'schema_migrations', // SQLite records its version in PRAGMA user_version
  'job_files', // the embedded store keeps the files jobs make in a folder beside its database
  'job_file_chunks',
  'service_keys', // the embedded store keeps its file-link key in the files' folder, backed up with them
];

function embeddedColumns(): string[] {
  const dir = mkdtempSync(join(tmpdir(), 'schema-'));
  try {
    const db = openDatabase(join(dir, 'store.db'));
    const tables = db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`).all() as { name: string }[];
    const columns = tables.flatMap(({ name }) => (db.prepare(`PRAGMA table_info(${name})`).all() as { name: string }[]).map((c) => `${name}.${c.name}`));
    db.close();
    return columns.sort();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function postgresColumns(): Promise<string[]> {
  const { schema, pool, drop } = await postgresSchema();
  try {
    await migrate(pool);
    const r = await pool.query('SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = $1', [schema]);
    return r.rows.map((row: { table_name: string; column_name: string }) => `${row.table_name}.${row.column_name}`).sort();
  } finally {
    await drop();
  }
}

const tableOf = (column: string) => column.slice(0, column.indexOf('.'));

describe('the embedded and PostgreSQL schemas', () => {
  // It needs PostgreSQL: it lives with the scaled tests, which only the scaled project runs.
  it('have the same tables with the same columns, once both are migrated', async () => {
    const embedded = embeddedColumns().filter((c) => !ONLY_EMBEDDED.includes(tableOf(c)));
    const postgres = (await postgresColumns()).filter((c) => !ONLY_POSTGRES.includes(tableOf(c)));

    expect(embedded.length).toBeGreaterThan(20);
    expect(embedded).toEqual(postgres);
  });
});
