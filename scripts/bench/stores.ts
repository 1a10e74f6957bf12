// The stores the benchmark runs the server on, each isolated and thrown away at the end:
// an embedded store in a temp folder, or a PostgreSQL schema plus a Redis key prefix
// (as server/test/support/stores.ts does for the tests). Accounts are made through the
// server's own use case; bulk data (avatars, keys, queued jobs, outbox rows) goes through
// the store's bulk loader (server/src/storage/bulk.ts: one statement or one transaction
// each, which is what makes a million avatars take seconds rather than hours), so the
// benchmark writes no SQL of its own and follows the schema wherever it goes.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import pg from 'pg';
import { createAccount } from '../../server/src/domain/accounts.ts';
import { systemClock } from '../../server/src/domain/clock.ts';
import { CREDIT_COST, periodOf } from '../../server/src/domain/credits.ts';
import { buildTerminalEvent } from '../../server/src/domain/events.ts';
import { newAvatarId, newKeyId, randomSuffix } from '../../server/src/domain/ids.ts';
import { KEY_DISPLAY_LENGTH, generateApiKey, hashApiKey } from '../../server/src/domain/keys.ts';
import type { AvatarInput, Job, RatePlan } from '../../server/src/domain/model.ts';
import type { Store } from '../../server/src/domain/ports.ts';
import { loadConfig } from '../../server/src/config.ts';
import { openBulkLoader, openStore } from '../../server/src/runtime.ts';
import type { BulkLoader, JobProgress } from '../../server/src/storage/bulk.ts';

export type { JobProgress };

export const DATABASE_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
export const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';

export type StoreKind = 'embedded' | 'pg';
export const STORE_LABEL: Record<StoreKind, string> = { embedded: 'embedded (SQLite)', pg: 'PostgreSQL + Redis' };

/** A plan whose limits are never reached in a run: the limiter counts every request but never refuses. */
export const GENEROUS_PLAN: RatePlan = {
  read: { minute: 1_000_000_000, day: 1_000_000_000 },
  generation: { minute: 1_000_000_000, day: 1_000_000_000 },
};
/** Credits for every job a run can create (at the contract's prices); the ledger is still updated per job. */
export const BIG_CREDITS = 1_000_000_000;

/** The avatar every seeded row describes (a valid props avatar). */
export const SEED_INPUT: AvatarInput = { type: 'props', name: 'Bench avatar', ethnicity: 'Hispanic', sex: 'male', age: 34 };
/** What a seeded avatar cost: the contract's price (x-credit-cost of createAvatar). */
export const AVATAR_CREDITS = CREDIT_COST.avatar;

export interface Owner {
  accountId: string;
  keyId: string;
  apiKey: string;
  signingSecret: string;
}

export interface BenchStore {
  kind: StoreKind;
  label: string;
  /** What points a server at this store. */
  env: Record<string, string>;
  createOwner(options: { name: string; plan?: RatePlan; monthlyCredits?: number }): Promise<Owner>;
  /** `count` ready avatars of the owner, in bulk. */
  seedAvatars(owner: Owner, count: number): Promise<void>;
  /** Up to `count` of the owner's avatar IDs, drawn at random. */
  sampleAvatarIds(owner: Owner, count: number): Promise<string[]>;
  /** `count` more keys of the owner's account; returns the keys themselves. */
  seedKeys(owner: Owner, count: number): Promise<string[]>;
  /** `count` queued avatar jobs with their credits reserved, as if accepted and not yet run. */
  seedQueuedJobs(owner: Owner, count: number): Promise<void>;
  /** `count` ready avatars each with a pending webhook event to `url`, due now. */
  seedPendingEvents(owner: Owner, count: number, url: string, publicBaseUrl: string): Promise<void>;
  jobProgress(owner: Owner): Promise<JobProgress>;
  /** created_at and completed_at of the owner's finished jobs. */
  jobTimes(owner: Owner): Promise<{ createdAt: number; completedAt: number }[]>;
  eventCounts(owner: Owner): Promise<Record<string, number>>;
  /**
   * Median time of the job runner's claim on this store when nothing is queued (what the
   * runner pays on every poll and every wake-up), through the server's own adapter.
   */
  idleClaimMs(samples?: number): Promise<number>;
  drop(): Promise<void>;
}

async function timeIdleClaims(store: Store, samples: number): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < samples; i++) {
    const now = Date.now();
    const started = performance.now();
    const job = await store.jobs.claimJob('bench-claim-probe', now, now + 60_000);
    times.push(performance.now() - started);
    // Only called with nothing queued; should a job turn up, hand it straight back.
    if (job) await store.jobs.releaseLease(job.id, 'bench-claim-probe', Date.now());
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)]!;
}

/** A job of the owner's, as the server would have made it at `at`. */
function jobOf(owner: Owner, status: Job['status'], at: number, webhookUrl: string | null = null): Job {
  const terminal = status === 'ready' || status === 'failed';
  return {
    id: newAvatarId(),
    kind: 'avatar',
    accountId: owner.accountId,
    keyId: owner.keyId,
    sandbox: true,
    status,
    input: SEED_INPUT,
    webhookUrl,
    credits: AVATAR_CREDITS,
    period: periodOf(at),
    error: null,
    result: status === 'ready' ? {} : null,
    createdAt: at,
    updatedAt: at,
    completedAt: terminal ? at : null,
    attempts: terminal ? 1 : 0,
  };
}

/** The benchmark's operations on an open store of the server's, through its ports and its bulk loader. */
function benchOps(store: Store, bulk: BulkLoader): Omit<BenchStore, 'kind' | 'label' | 'env' | 'idleClaimMs' | 'drop'> {
  return {
    async createOwner(options) {
      const created = await createAccount(store, systemClock, {
        name: options.name,
        mode: 'sandbox',
        plan: options.plan ?? GENEROUS_PLAN,
        monthlyCredits: options.monthlyCredits ?? BIG_CREDITS,
      });
      return { accountId: created.account_id, keyId: created.key_id, apiKey: created.api_key, signingSecret: created.signing_secret };
    },
    seedAvatars: (owner, count) => bulk.insertReadyAvatars(jobOf(owner, 'ready', Date.now()), count),
    sampleAvatarIds: (owner, count) => bulk.sampleJobIds(owner.accountId, 'avatar', count),
    async seedKeys(owner, count) {
      const now = Date.now();
      const keys = Array.from({ length: count }, () => {
        const key = generateApiKey('sandbox');
        return { key, record: { id: newKeyId(), accountId: owner.accountId, mode: 'sandbox' as const, prefix: key.slice(0, KEY_DISPLAY_LENGTH), hash: hashApiKey(key), createdAt: now } };
      });
      await bulk.insertKeys(keys.map((k) => k.record));
      return keys.map((k) => k.key);
    },
    async seedQueuedJobs(owner, count) {
      const now = Date.now();
      await bulk.insertQueuedJobs(Array.from({ length: count }, (_, i) => jobOf(owner, 'queued', now - count + i)));
    },
    async seedPendingEvents(owner, count, url, publicBaseUrl) {
      const now = Date.now();
      const rows = Array.from({ length: count }, (_, i) => {
        // Built by the server's own serializer, as a finished job leaves it.
        const job = jobOf(owner, 'ready', now - count + i, url);
        return { job, event: buildTerminalEvent(job, publicBaseUrl, job.completedAt!)! };
      });
      await bulk.insertFinishedJobs(rows);
    },
    jobProgress: (owner) => bulk.jobProgress(owner.accountId),
    jobTimes: (owner) => bulk.jobTimes(owner.accountId),
    eventCounts: (owner) => bulk.eventCounts(owner.accountId),
  };
}

// --- embedded -------------------------------------------------------------------------

export async function createEmbeddedBenchStore(): Promise<BenchStore> {
  const dir = mkdtempSync(join(tmpdir(), 'avatar-bench-'));
  // Opened beside the server, as the operator command opens it: the server's lock is not taken.
  const config = loadConfig({ DATA_DIR: dir });
  const store = await openStore(config, { serving: false });
  const bulk = openBulkLoader(config);
  return {
    kind: 'embedded',
    label: STORE_LABEL.embedded,
    env: { DATA_DIR: dir },
    ...benchOps(store, bulk),
    idleClaimMs: (samples = 5) => timeIdleClaims(store, samples),
    async drop() {
      await bulk.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

// --- PostgreSQL + Redis ---------------------------------------------------------------

export async function createScaledBenchStore(): Promise<BenchStore> {
  const schema = `bench_${randomSuffix(12)}`;
  const admin = new pg.Client({ connectionString: DATABASE_URL });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  await admin.end();
  const url = new URL(DATABASE_URL);
  url.searchParams.set('options', `-c search_path=${schema}`);
  const databaseUrl = url.toString();
  const prefix = `${schema}:`;
  const config = loadConfig({ DATABASE_URL: databaseUrl, REDIS_URL, REDIS_PREFIX: prefix });
  const store = await openStore(config, { serving: false });
  const bulk = openBulkLoader(config);

  return {
    kind: 'pg',
    label: STORE_LABEL.pg,
    env: { DATABASE_URL: databaseUrl, REDIS_URL, REDIS_PREFIX: prefix },
    ...benchOps(store, bulk),
    idleClaimMs: (samples = 5) => timeIdleClaims(store, samples),
    async drop() {
      await bulk.close().catch(() => undefined);
      await store.close().catch(() => undefined);
      const c = new pg.Client({ connectionString: DATABASE_URL });
      await c.connect();
      try {
        await c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      } finally {
        await c.end();
      }
      const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
      try {
        await redis.connect();
        let cursor = '0';
        do {
          const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
          cursor = next;
          if (keys.length) await redis.unlink(...keys);
        } while (cursor !== '0');
      } finally {
        redis.disconnect();
      }
    },
  };
}

export async function createBenchStore(kind: StoreKind): Promise<BenchStore> {
  return kind === 'embedded' ? createEmbeddedBenchStore() : createScaledBenchStore();
}
