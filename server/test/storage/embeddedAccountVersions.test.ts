// The embedded store's account version: the server reads SQLite's data_version at most
// once a millisecond, and a change made through another connection (the admin command)
// is reported done only once the server is sure to see it on its next count.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { embeddedAccountVersions } from '../../src/storage/embedded/accountVersions.ts';
import { openDatabase, type Db } from '../../src/storage/embedded/database.ts';

let dir: string;
let serverDb: Db;
let adminDb: Db;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'account-versions-'));
  serverDb = openDatabase(join(dir, 'store.db'));
  adminDb = openDatabase(join(dir, 'store.db'));
});
afterEach(() => {
  serverDb.close();
  adminDb.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('the embedded account version', () => {
  it("moves for the server's very next count after another connection's change settles", async () => {
    const server = embeddedAccountVersions(serverDb, { server: true });
    const admin = embeddedAccountVersions(adminDb, { server: false });
    adminDb.exec('CREATE TABLE changes (n INTEGER)');
    const change = adminDb.prepare('INSERT INTO changes (n) VALUES (?)');

    const missed: number[] = [];
    for (let i = 0; i < 100; i++) {
      const before = server.current(); // read just now: the freshest a kept value can be
      change.run(i);
      admin.bump();
      await admin.settled();
      if (server.current() === before) missed.push(i);
    }

    expect(missed).toEqual([]);
  });

  it("does not wait in the server, whose own changes move the version it reads", async () => {
    const server = embeddedAccountVersions(serverDb, { server: true });
    const before = server.current();

    server.bump();
    const settling = server.settled();

    expect(server.current()).toBe(before + 1);
    await expect(Promise.race([settling.then(() => 'settled'), Promise.resolve().then(() => Promise.resolve('waiting'))])).resolves.toBe('settled');
  });
});
