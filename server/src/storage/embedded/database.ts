import { closeSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import { MIGRATIONS } from './schema.ts';

export type Db = DatabaseSync;
import type { Row } from '../rows.ts';

export type { Row };

/** The store holds hashed keys and plain signing secrets: only its owner may read it. */
export const STORE_DIR_MODE = 0o700;
const STORE_FILE_MODE = 0o600;

/**
 * Opens (creating if needed) the SQLite file and brings its schema up to date. WAL lets
 * readers work while a writer commits; busy_timeout makes a second process (the admin
 * command) wait for the lock instead of failing.
 */
export function openDatabase(file: string): Db {
  if (file !== ':memory:') {
    mkdirSync(dirname(file), { recursive: true, mode: STORE_DIR_MODE });
    // Created here rather than by SQLite, which would follow the umask (often world-readable);
    // SQLite gives the -wal and -shm files the main file's permissions. An existing file keeps its own.
    closeSync(openSync(file, 'a', STORE_FILE_MODE));
  }
  const db = new DatabaseSync(file);
  keepStatements(db);
  db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA busy_timeout = 5000; PRAGMA foreign_keys = ON;');
  migrate(db);
  return db;
}

/** Statements a connection keeps compiled; the stores use a few dozen, and lists build theirs from the filters asked. */
export const KEPT_STATEMENTS = 256;

/**
 * Makes `db.prepare` answer a statement compiled before for the same SQL. The stores
 * prepare their statements where they run them, several per request and per job, and
 * SQLite compiles a statement in about three times what it takes to run an insert
 * (60 against 20 µs on the benchmark machine): kept, the write path stops paying it.
 * Reusing one is safe because each run resets it and nothing here iterates a statement
 * while running it again. The least recently used is dropped past KEPT_STATEMENTS.
 */
function keepStatements(db: DatabaseSync): void {
  const compile = db.prepare.bind(db);
  const kept = new Map<string, StatementSync>();
  db.prepare = (sql, options) => {
    if (options) return compile(sql, options);
    let statement = kept.get(sql);
    if (statement) kept.delete(sql); // put back below, as the most recently used
    else statement = compile(sql);
    kept.set(sql, statement);
    if (kept.size > KEPT_STATEMENTS) kept.delete(kept.keys().next().value!);
    return statement;
  };
}

function migrate(db: Db): void {
  const current = Number((db.prepare('PRAGMA user_version').get() as Row).user_version);
  for (let version = current; version < MIGRATIONS.length; version++) {
    transaction(db, () => {
      db.exec(MIGRATIONS[version]!);
      db.exec(`PRAGMA user_version = ${version + 1}`);
    });
  }
}

/**
 * Runs `work` in an IMMEDIATE transaction: the write lock is taken at BEGIN, so a
 * read-then-write inside it cannot interleave with another process's write. Inside one
 * process the work is synchronous, so nothing else runs between BEGIN and COMMIT.
 */
export function transaction<T>(db: Db, work: () => T): T {
  // Prepared rather than exec'd, so that the kept statements serve them too.
  db.prepare('BEGIN IMMEDIATE').run();
  try {
    const result = work();
    db.prepare('COMMIT').run();
    return result;
  } catch (error) {
    db.prepare('ROLLBACK').run();
    throw error;
  }
}

/**
 * Transactions of one turn of the event loop, committed together (group commit). A
 * commit is the largest single cost of a write on this store (the WAL append, and now and
 * then a checkpoint); creates, claims and completions that arrive together share one.
 * Each work runs alone inside a savepoint, in the order asked, and sees what those before
 * it wrote, exactly as if the transactions ran one after another: a work that throws rolls
 * back to its savepoint (its writes undone, the others' kept) and its caller gets the
 * error. Every caller hears only after the COMMIT, so what it was told is stored is; if
 * the transaction cannot begin or commit, every work of the group fails and none is stored.
 */
export interface CommitGroup {
  run<T>(work: () => T): Promise<T>;
  /** Runs what is waiting now (the store does before it closes). */
  flush(): void;
}

interface Waiting {
  work: () => unknown;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

export function createCommitGroup(db: Db): CommitGroup {
  let waiting: Waiting[] = [];
  let scheduled: NodeJS.Immediate | undefined;

  function flush(): void {
    clearImmediate(scheduled);
    scheduled = undefined;
    const group = waiting;
    waiting = [];
    if (group.length === 0) return;
    const outcomes: { ok: boolean; value: unknown }[] = [];
    try {
      db.prepare('BEGIN IMMEDIATE').run();
    } catch (error) {
      for (const w of group) w.reject(error);
      return;
    }
    try {
      for (const w of group) {
        db.prepare('SAVEPOINT grouped').run();
        try {
          outcomes.push({ ok: true, value: w.work() });
          db.prepare('RELEASE grouped').run();
        } catch (error) {
          // Some failures end the whole transaction (SQLite rolls it back itself): then
          // nothing of the group is stored, and every work of it fails.
          if (!db.isTransaction) throw error;
          db.prepare('ROLLBACK TO grouped').run();
          db.prepare('RELEASE grouped').run();
          outcomes.push({ ok: false, value: error });
        }
      }
      db.prepare('COMMIT').run();
    } catch (error) {
      if (db.isTransaction) db.prepare('ROLLBACK').run();
      for (const w of group) w.reject(error);
      return;
    }
    group.forEach((w, i) => {
      const o = outcomes[i]!;
      if (o.ok) w.resolve(o.value);
      else w.reject(o.value);
    });
  }

  return {
    run<T>(work: () => T): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        waiting.push({ work, resolve: resolve as (value: unknown) => void, reject });
        scheduled ??= setImmediate(flush);
      });
    },
    flush,
  };
}

/** A condition of a page: an expression that must equal a value; skipped when the value is undefined (a filter not asked for). */
export type PageCondition = readonly [expression: string, value: string | number | undefined];

/**
 * One page of `table`'s rows where every condition holds, newest first (created_at, then
 * id, both descending), starting after `after`: the order every list pages in, so that a
 * cursor of the last row's time and ID is exact while rows are added.
 */
export function newestFirstPage(db: Db, table: string, conditions: readonly PageCondition[], after: { createdAt: number; id: string } | undefined, limit: number): Row[] {
  const asked = conditions.filter((c): c is readonly [string, string | number] => c[1] !== undefined);
  const where = asked.map(([expression]) => `${expression} = ?`);
  const values = asked.map(([, value]) => value);
  if (after) {
    where.push('(created_at, id) < (?, ?)');
    values.push(after.createdAt, after.id);
  }
  return db.prepare(`SELECT * FROM ${table} WHERE ${where.join(' AND ')} ORDER BY created_at DESC, id DESC LIMIT ?`).all(...values, limit) as Row[];
}


