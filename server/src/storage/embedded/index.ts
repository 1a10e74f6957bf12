import type { Store } from '../../domain/ports.ts';
import { embeddedAccounts } from './accounts.ts';
import { embeddedAccountVersions } from './accountVersions.ts';
import { createCommitGroup, openDatabase, type Db } from './database.ts';
import { embeddedFiles, filesDirOf } from './files.ts';
import { embeddedJobs } from './jobs.ts';
import { embeddedOutbox } from './outbox.ts';
import { RATE_COUNTER_FLUSH_MS, embeddedRateLimits } from './rateLimits.ts';
import { takeServerLock, type ServerLock } from './serverLock.ts';

export interface EmbeddedOptions {
  /**
   * Set by the server, which is the only process that runs jobs on an embedded store:
   * every job still `processing` belongs to a process that died, so its lease is
   * expired at once and the job resumes now instead of when the lease runs out.
   * The admin command opens the same file without it.
   */
  recoverOrphanedJobs?: boolean;
  /** Set by the server: the file whose lock makes it the store's only server (serverLock.ts). */
  serverLockFile?: string;
}

/** The default store: one SQLite file (Node's built-in node:sqlite), nothing to install. */
export function createEmbeddedStore(file: string, options: EmbeddedOptions = {}): Store {
  // Taken before anything else: the recovery below is only right for the only server.
  const lock = options.serverLockFile ? takeServerLock(options.serverLockFile) : undefined;
  let db: Db | undefined;
  try {
    db = openDatabase(file);
    if (options.recoverOrphanedJobs) {
      db.prepare(`UPDATE jobs SET lease_until = 0, lease_owner = NULL WHERE status = 'processing'`).run();
      db.prepare(`UPDATE webhook_events SET lease_until = NULL WHERE status = 'pending'`).run();
    }
    return embeddedStore(db, lock, filesDirOf(file));
  } catch (error) {
    if (db?.isOpen) db.close();
    lock?.release();
    throw error;
  }
}

function embeddedStore(db: Db, lock: ServerLock | undefined, filesDir: string): Store {
  // The process holding the server lock is the server: its own changes need no announcing.
  const versions = embeddedAccountVersions(db, { server: lock !== undefined });
  const rateLimits = embeddedRateLimits(db, versions);
  // Creates, claims and completions of one turn of the event loop share a commit.
  const grouped = createCommitGroup(db);
  const stores = { accounts: embeddedAccounts(db, versions), jobs: embeddedJobs(db, grouped), files: embeddedFiles(filesDir, db), outbox: embeddedOutbox(db) };
  const flusher = setInterval(() => rateLimits.flush(), RATE_COUNTER_FLUSH_MS);
  const ping = db.prepare('SELECT 1');
  flusher.unref();
  return {
    ...stores,
    rateLimits,
    async ping() {
      ping.get();
    },
    async close() {
      clearInterval(flusher);
      try {
        grouped.flush();
        rateLimits.flush();
      } finally {
        if (db.isOpen) db.close();
        lock?.release();
      }
    },
  };
}
