import type { Db, Row } from './database.ts';

/**
 * The version of every account in an embedded store, for the key records the server
 * keeps between requests. One number serves all accounts: it moves on with each change
 * this process makes to an account or a key, and whenever another process (the admin
 * command) has committed anything to the file, which SQLite's `data_version` tells at
 * the cost of a pragma. Both are rare next to reads, so one number costs little.
 */
export interface AccountVersions {
  current(): number;
  /** Called by this process's changes to an account or a key. */
  bump(): void;
}

export function embeddedAccountVersions(db: Db): AccountVersions {
  const dataVersion = db.prepare('PRAGMA data_version');
  let seen = Number((dataVersion.get() as Row).data_version);
  let version = 0;
  return {
    current() {
      const now = Number((dataVersion.get() as Row).data_version);
      if (now !== seen) {
        seen = now;
        version += 1;
      }
      return version;
    },
    bump() {
      version += 1;
    },
  };
}
