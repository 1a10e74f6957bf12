// Many records written or read at once, for the benchmark and the tests that need a large
// store. Not a port of the domain: the API and the workers never use it, so a new store
// need not have one (without it, only `npm run bench` cannot seed that store). Each store
// that has one keeps it in its folder (`embedded/bulk.ts`, `postgres-redis/bulk.ts`); a loader
// opens a connection of its own to the store, beside any server using it.
import type { Job, JobKind, OutboxEvent } from '../domain/model.ts';
import type { NewApiKey } from '../domain/ports.ts';

/** How far an account's jobs have come, in one read. */
export interface JobProgress {
  total: number;
  terminal: number;
  minCreatedAt: number | null;
  minCompletedAt: number | null;
  maxCompletedAt: number | null;
}

/**
 * Each record is written as the store's own operations leave it, so a seeded store is one
 * the server could have made; only the credit ledger is left alone where it says so.
 */
export interface BulkLoader {
  /** `count` copies of the ready avatar `template`, each with an ID of its own made inside the store (millions at a time); the ledger is left alone. */
  insertReadyAvatars(template: Job, count: number): Promise<void>;
  insertKeys(keys: NewApiKey[]): Promise<void>;
  /** Queued jobs, with their credits reserved in their period. */
  insertQueuedJobs(jobs: Job[]): Promise<void>;
  /** Terminal jobs with their pending webhook events; the ledger is left alone. */
  insertFinishedJobs(rows: { job: Job; event: OutboxEvent }[]): Promise<void>;
  sampleJobIds(accountId: string, kind: JobKind, count: number): Promise<string[]>;
  jobProgress(accountId: string): Promise<JobProgress>;
  jobTimes(accountId: string): Promise<{ createdAt: number; completedAt: number }[]>;
  /** The account's outbox events by status. */
  eventCounts(accountId: string): Promise<Record<string, number>>;
  /** Closes the loader's own connection; the store and its servers are left as they are. */
  close(): Promise<void>;
}
