// The embedded store's group commit: the transactions of one turn of the event loop share
// one COMMIT, each still alone in its savepoint, and no caller hears before the commit.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createCommitGroup, openDatabase, type Db } from '../../src/storage/embedded/database.ts';

let dir: string;
let db: Db;
let other: Db;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'commit-group-'));
  db = openDatabase(join(dir, 'store.db'));
  other = openDatabase(join(dir, 'store.db'));
  db.exec('CREATE TABLE t (n INTEGER PRIMARY KEY)');
});
afterEach(() => {
  db.close();
  other.close();
  rmSync(dir, { recursive: true, force: true });
});

const rows = (from: Db) => (from.prepare('SELECT n FROM t ORDER BY n').all() as { n: number }[]).map((r) => r.n);
const insert = (n: number) => () => db.prepare('INSERT INTO t (n) VALUES (?)').run(n);

describe('the commit group', () => {
  it('commits the works of one turn once, and each caller hears after the commit, when another connection reads them', async () => {
    const group = createCommitGroup(db);
    const commits = vi.spyOn(db, 'prepare');
    const seenByOther: number[][] = [];
    const all = [1, 2, 3].map((n) => group.run(insert(n)).then(() => seenByOther.push(rows(other))));
    expect(rows(other)).toEqual([]); // nothing runs before the turn ends
    await Promise.all(all);

    expect(commits.mock.calls.filter(([sql]) => sql === 'COMMIT')).toHaveLength(1);
    expect(seenByOther).toEqual([[1, 2, 3], [1, 2, 3], [1, 2, 3]]);
  });

  it('runs the works in order, each seeing what those before it wrote', async () => {
    const group = createCommitGroup(db);
    const count = () => (db.prepare('SELECT COUNT(*) AS c FROM t').get() as { c: number }).c;
    const results = await Promise.all([group.run(count), group.run(insert(1)).then(() => 'inserted'), group.run(count)]);
    expect(results).toEqual([0, 'inserted', 1]);
  });

  it('undoes only the work that throws: its caller gets the error, the others are stored', async () => {
    const group = createCommitGroup(db);
    const first = group.run(insert(1));
    const failing = group.run(() => {
      insert(2)();
      insert(1)(); // the primary key is taken by the work before: this throws
    });
    const outcomes = await Promise.allSettled([first, failing, group.run(insert(3))]);

    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(String((outcomes[1] as PromiseRejectedResult).reason)).toMatch(/UNIQUE/);
    expect(rows(other)).toEqual([1, 3]);
    expect(db.isTransaction).toBe(false);
  });

  it('fails every work of a group that cannot begin, storing none, and serves the next group', async () => {
    db.exec('PRAGMA busy_timeout = 0');
    const group = createCommitGroup(db);
    other.exec('BEGIN IMMEDIATE'); // another process holds the write lock
    const outcomes = await Promise.allSettled([group.run(insert(1)), group.run(insert(2))]);
    other.exec('ROLLBACK');

    expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected']);
    expect(rows(other)).toEqual([]);
    await group.run(insert(3));
    expect(rows(other)).toEqual([3]);
  });

  it('runs what waits when flushed, before the store closes', async () => {
    const group = createCommitGroup(db);
    const done = group.run(insert(1));
    group.flush();
    expect(rows(other)).toEqual([1]);
    await done;
  });
});
