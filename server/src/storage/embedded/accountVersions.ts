import { setTimeout as delay } from 'node:timers/promises';
import type { Db, Row } from './database.ts';

/**
 * How old the file's `data_version` may be when a request is counted. Reading it takes
 * SQLite's read lock (two fcntl calls), the largest cost of a read once the record is
 * kept, so the server reads it at most once per this many milliseconds; a change made
 * by another connection is therefore announced only this long after its commit (settled).
 */
export const DATA_VERSION_FRESH_MS = 1;

/**
 * The version of every account in an embedded store, for the key records the server
 * keeps between requests. One number serves all accounts: it moves on with each change
 * this process makes to an account or a key, and whenever another process (the admin
 * command) has committed anything to the file, which SQLite's `data_version` tells. Both
 * are rare next to reads, so one number costs little.
 */
export interface AccountVersions {
  current(): number;
  /** Called by this process's changes to an account or a key. */
  bump(): void;
  /**
   * Called after a change is committed; resolves once the server on the file counts
   * every request with it in view: at once in the server itself, whose own changes move
   * the version it reads; in any other process, once the server's `data_version` has had
   * time to be read again after the commit. A change reported done is then in force for
   * the very next request.
   */
  settled(): Promise<void>;
}

export function embeddedAccountVersions(db: Db, { server }: { server: boolean }): AccountVersions {
  const dataVersion = db.prepare('PRAGMA data_version');
  let seen = Number((dataVersion.get() as Row).data_version);
  let readAt = performance.now();
  let version = 0;
  return {
    current() {
      const now = performance.now();
      if (now - readAt >= DATA_VERSION_FRESH_MS) {
        readAt = now; // before the read: what it sees is at least this recent
        const latest = Number((dataVersion.get() as Row).data_version);
        if (latest !== seen) {
          seen = latest;
          version += 1;
        }
      }
      return version;
    },
    bump() {
      version += 1;
    },
    async settled() {
      if (server) return;
      // A request sent once this resolves is counted at least this long after the commit,
      // against a data_version read at most DATA_VERSION_FRESH_MS before it: after the commit.
      const committedBy = performance.now();
      while (performance.now() - committedBy < 2 * DATA_VERSION_FRESH_MS) await delay(DATA_VERSION_FRESH_MS);
    },
  };
}
