// One server per embedded store. The store's jobs and webhook leases assume a single
// worker process (a server that starts takes over every job still `processing`), so a
// second server on the same folder would take the first one's work from under it.
//
// The lock is SQLite's own exclusive lock on a small file beside the store: the kernel
// releases it when the process ends in any way (a crash or SIGKILL included), so a
// restart never finds a stale lock, and no process ID is trusted or compared. The
// operator command opens the store without it and keeps working beside a server.
import { mkdirSync } from 'node:fs';
import { DatabaseSync } from 'node:sqlite';
import { dirname } from 'node:path';
import { STORE_DIR_MODE } from './database.ts';

export class StoreLockedError extends Error {
  override name = 'StoreLockedError';
}

export interface ServerLock {
  release(): void;
}

export function takeServerLock(lockFile: string): ServerLock {
  // Taken before the store opens, so this may be what creates DATA_DIR: with the store's mode.
  mkdirSync(dirname(lockFile), { recursive: true, mode: STORE_DIR_MODE });
  const db = new DatabaseSync(lockFile);
  try {
    db.exec('PRAGMA busy_timeout = 0; PRAGMA locking_mode = EXCLUSIVE; BEGIN EXCLUSIVE');
  } catch (error) {
    db.close();
    if ((error as { errcode?: number }).errcode === 5 /* SQLITE_BUSY */) {
      throw new StoreLockedError(
        `another server is already running on the embedded store in ${dirname(lockFile)}. ` +
          'Stop it, or give this one another DATA_DIR; to run several API processes, use PostgreSQL + Redis (DATABASE_URL, REDIS_URL). ' +
          'The operator command (npm run admin) works beside a running server.',
      );
    }
    throw error;
  }
  return {
    release() {
      if (db.isOpen) db.close();
    },
  };
}
