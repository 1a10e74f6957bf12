// A store as it stood before one of its migrations: every earlier migration applied and
// recorded as done, so that a test writes the rows of that time and then runs the
// migration on them, as an upgrade does.
import { DatabaseSync } from 'node:sqlite';
import type pg from 'pg';
import { MIGRATIONS as EMBEDDED_MIGRATIONS } from '../../src/storage/embedded/schema.ts';
import { MIGRATIONS as POSTGRES_MIGRATIONS } from '../../src/storage/postgres-redis/migrations.ts';
import { postgresSchema } from './stores.ts';

/**
 * Writes an embedded store at `file` as it stood before its first migration that `isIt`
 * picks, and returns that migration's index (its version once applied). The store's own
 * opening (`openDatabase`) then applies it and those after it.
 */
export function embeddedBefore(file: string, isIt: (sql: string) => boolean): number {
  const index = EMBEDDED_MIGRATIONS.findIndex(isIt);
  if (index < 0) throw new Error('no embedded migration is the one asked for');
  const db = new DatabaseSync(file);
  try {
    for (let version = 0; version < index; version++) db.exec(EMBEDDED_MIGRATIONS[version]!);
    db.exec(`PRAGMA user_version = ${index}`);
  } finally {
    db.close();
  }
  return index;
}

export interface PostgresBefore {
  /** A pool on a schema of its own, holding the store as it stood before the migration. */
  pool: pg.Pool;
  /** That migration's version. */
  version: number;
  /** Ends the pool and drops the schema. */
  drop(): Promise<void>;
}

/** A PostgreSQL schema of its own holding the store as it stood before the migration named `name`. */
export async function postgresBefore(name: string): Promise<PostgresBefore> {
  const target = POSTGRES_MIGRATIONS.find((m) => m.name === name);
  if (!target) throw new Error(`no PostgreSQL migration is named "${name}"`);
  const { pool, drop } = await postgresSchema();
  try {
    await pool.query('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())');
    for (const m of POSTGRES_MIGRATIONS.filter((x) => x.version < target.version)) {
      await pool.query(m.sql);
      await pool.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [m.version, m.name]);
    }
  } catch (error) {
    await drop();
    throw error;
  }
  return { pool, version: target.version, drop };
}
