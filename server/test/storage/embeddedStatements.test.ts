// The embedded store's connection keeps the statements it compiles, by their SQL: the
// same statement serves every run of the same SQL, a statement kept across a schema change
// reads the new schema, the least recently used is dropped past the bound, and the
// transactions run on kept statements commit and roll back as before.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { KEPT_STATEMENTS, openDatabase, transaction, type Db } from '../../src/storage/embedded/database.ts';

let dir: string;
let db: Db;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'kept-statements-'));
  db = openDatabase(join(dir, 'store.db'));
  db.exec('CREATE TABLE t (n INTEGER)');
});
afterEach(() => {
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("the embedded connection's kept statements", () => {
  it('answers the statement compiled before for the same SQL, each run with its own values', () => {
    const insert = db.prepare('INSERT INTO t (n) VALUES (?)');
    expect(db.prepare('INSERT INTO t (n) VALUES (?)')).toBe(insert);
    db.prepare('INSERT INTO t (n) VALUES (?)').run(1);
    db.prepare('INSERT INTO t (n) VALUES (?)').run(2);
    expect(db.prepare('SELECT n FROM t ORDER BY n').all()).toEqual([{ n: 1 }, { n: 2 }]);
  });

  it('reads the new schema through a statement kept across a migration', () => {
    db.prepare('INSERT INTO t (n) VALUES (?)').run(1);
    expect(db.prepare('SELECT * FROM t').all()).toEqual([{ n: 1 }]);
    db.exec("ALTER TABLE t ADD COLUMN label TEXT NOT NULL DEFAULT 'x'");
    expect(db.prepare('SELECT * FROM t').all()).toEqual([{ n: 1, label: 'x' }]);
  });

  it('drops the least recently used past the bound and compiles it again when asked', () => {
    const first = db.prepare('SELECT 0 AS v');
    const used = db.prepare('SELECT -1 AS v');
    for (let i = 1; i < KEPT_STATEMENTS; i++) {
      db.prepare(`SELECT ${i} AS v`);
      if (i % 16 === 0) db.prepare('SELECT -1 AS v'); // kept in use, so never the oldest
    }
    expect(db.prepare('SELECT -1 AS v')).toBe(used);
    const again = db.prepare('SELECT 0 AS v');
    expect(again).not.toBe(first);
    expect(again.get()).toEqual({ v: 0 });
  });

  it('commits a transaction that ends and rolls back one that throws, leaving none open', () => {
    transaction(db, () => db.prepare('INSERT INTO t (n) VALUES (?)').run(1));
    expect(() =>
      transaction(db, () => {
        db.prepare('INSERT INTO t (n) VALUES (?)').run(2);
        throw new Error('stop');
      }),
    ).toThrow('stop');
    expect(db.isTransaction).toBe(false);
    expect(db.prepare('SELECT n FROM t').all()).toEqual([{ n: 1 }]);
    transaction(db, () => db.prepare('INSERT INTO t (n) VALUES (?)').run(3));
    expect(db.prepare('SELECT n FROM t ORDER BY n').all()).toEqual([{ n: 1 }, { n: 3 }]);
  });
});
