import pg from 'pg';
import { StoreUnavailableError } from '../../domain/ports.ts';
import { MIGRATIONS } from './migrations.ts';

import type { Row } from '../rows.ts';

export type { Row };

/** Arbitrary constant naming this service's migration lock. */
const MIGRATION_LOCK = 72_416_001;

// SQLSTATE classes and driver errors that mean "the database is not there", as opposed
// to "the database refused this statement".
const UNAVAILABLE_SQLSTATE = /^(08|57P0[1-3]|53300)/;
const UNAVAILABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'ENOTFOUND', 'EHOSTUNREACH', 'EPIPE', 'EAI_AGAIN']);

export function isUnavailable(error: unknown): boolean {
  const e = error as { code?: string; message?: string };
  if (e?.code && (UNAVAILABLE_CODES.has(e.code) || UNAVAILABLE_SQLSTATE.test(e.code))) return true;
  return /timeout exceeded when trying to connect|Connection terminated|connection timeout|Client has encountered a connection error/i.test(e?.message ?? '');
}

/** Runs `work`, turning "cannot reach PostgreSQL" into StoreUnavailableError. */
export async function guarded<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (isUnavailable(error)) throw new StoreUnavailableError(`PostgreSQL unavailable: ${(error as Error).message}`);
    throw error;
  }
}

/** How long the service waits for a statement before it answers 503. */
const QUERY_TIMEOUT_MS = 10_000;

/**
 * How long PostgreSQL lets a statement run. Shorter than the wait above: query_timeout only
 * stops waiting, and a statement given up on would otherwise go on and commit (a group of
 * creates, say) behind callers told that it failed, who may then send it again. Cancelled
 * on the server first, it is rolled back. Migrations lift it (they may take longer).
 */
export const STATEMENT_TIMEOUT_MS = 9_000;

export function createPool(url: string, options: { statementTimeoutMs?: number } = {}): pg.Pool {
  const pool = new pg.Pool({
    connectionString: url,
    max: 10,
    // Never hang a request on a database that does not answer: fail fast, answer 503.
    connectionTimeoutMillis: 2000,
    query_timeout: QUERY_TIMEOUT_MS,
    statement_timeout: options.statementTimeoutMs ?? STATEMENT_TIMEOUT_MS,
    idleTimeoutMillis: 30_000,
  });
  // An idle client losing its connection must not crash the process; the next query reconnects.
  pool.on('error', () => undefined);
  return pool;
}

/** BEGIN ... COMMIT on one client; ROLLBACK when `work` throws or returns `rollback`. */
export async function transaction<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>, lock?: string): Promise<T> {
  return guarded(async () => {
    const client = await pool.connect();
    try {
      // A lock statement (no parameters) goes with BEGIN in one round trip: the simple
      // query protocol runs both, in order, before the transaction's first read.
      await client.query(lock ? `BEGIN; ${lock}` : 'BEGIN');
      const result = await work(client);
      await client.query('COMMIT');
      return result;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  });
}

/**
 * No schema of the connection's search_path can be used, so there is nowhere to create
 * the tables; PostgreSQL's own words ("no schema has been selected to create in") do
 * not say which schema or what to do.
 */
export class SchemaMissingError extends Error {
  override name = 'SchemaMissingError';
}

/** The first schema search_path names (not "$user"), as written there and as PostgreSQL folds it. */
function firstSchema(searchPath: string): { written: string; name: string } {
  const written = searchPath.split(',').map((entry) => entry.trim()).find((entry) => entry !== '' && entry !== '"$user"') ?? searchPath;
  const name = written.startsWith('"') ? written.slice(1, -1).replaceAll('""', '"') : written.toLowerCase();
  return { written, name };
}

async function requireSchema(client: pg.PoolClient): Promise<void> {
  const { rows } = await client.query(`SELECT current_schema() AS current, current_setting('search_path') AS search_path`);
  if (rows[0].current !== null) return;
  const schema = firstSchema(String(rows[0].search_path));
  const exists = (await client.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schema.name])).rowCount! > 0;
  throw new SchemaMissingError(
    exists
      ? `this database user may not use the schema ${schema.written} (search_path in DATABASE_URL): grant it USAGE and CREATE on that schema`
      : `the schema ${schema.written} (search_path in DATABASE_URL) does not exist in this database: create it first (CREATE SCHEMA ${schema.written})`,
  );
}

export async function migrate(pool: pg.Pool): Promise<number[]> {
  return transaction(pool, async (client) => {
    await client.query('SET LOCAL statement_timeout = 0');
    await requireSchema(client);
    await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    await client.query('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())');
    const done = new Set((await client.query('SELECT version FROM schema_migrations')).rows.map((r: Row) => Number(r.version)));
    const applied: number[] = [];
    for (const m of MIGRATIONS) {
      if (done.has(m.version)) continue;
      await client.query(m.sql);
      await client.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [m.version, m.name]);
      applied.push(m.version);
    }
    return applied;
  });
}

/** A condition of a page: an expression that must equal a value; skipped when the value is undefined (a filter not asked for). */
export type PageCondition = readonly [expression: string, value: unknown];

/**
 * One page of `table`'s rows where every condition holds, newest first (created_at, then
 * id, both descending), starting after `after`: the order every list pages in, so that a
 * cursor of the last row's time and ID is exact while rows are added. The row comparison
 * is what an index (account_id, ..., created_at DESC, id DESC) serves.
 */
export async function newestFirstPage(
  pool: pg.Pool,
  table: string,
  columns: string,
  conditions: readonly PageCondition[],
  after: { createdAt: number; id: string } | undefined,
  limit: number,
): Promise<Row[]> {
  const values: unknown[] = [];
  const param = (value: unknown) => `$${values.push(value)}`;
  const where = conditions.filter(([, value]) => value !== undefined).map(([expression, value]) => `${expression} = ${param(value)}`);
  if (after) where.push(`(created_at, id) < (${param(after.createdAt)}, ${param(after.id)})`);
  const r = await guarded(() => pool.query(`SELECT ${columns} FROM ${table} WHERE ${where.join(' AND ')} ORDER BY created_at DESC, id DESC LIMIT ${param(limit)}`, values));
  return r.rows;
}


