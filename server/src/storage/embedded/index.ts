import type { Store } from '../ports.ts';
import { embeddedAccounts } from './accounts.ts';
import { openDatabase } from './database.ts';
import { embeddedJobs } from './jobs.ts';
import { embeddedOutbox } from './outbox.ts';
import { embeddedRateLimits } from './rateLimits.ts';

/** The default store: one SQLite file (Node's built-in node:sqlite), nothing to install. */
export function createEmbeddedStore(file: string): Store {
  const db = openDatabase(file);
  return {
    accounts: embeddedAccounts(db),
    jobs: embeddedJobs(db),
    outbox: embeddedOutbox(db),
    rateLimits: embeddedRateLimits(db),
    async ping() {
      db.prepare('SELECT 1').get();
    },
    async close() {
      if (db.isOpen) db.close();
    },
  };
}
