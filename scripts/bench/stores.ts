// The stores the benchmark runs the server on, each isolated and thrown away at the end:
// an embedded store in a temp folder, or a PostgreSQL schema plus a Redis key prefix
// (as server/test/support/stores.ts does for the tests). Accounts are made through the
// server's own use case; bulk data (avatars, keys, queued jobs, outbox rows) is written
// straight into the tables in one statement or one transaction, which is what makes a
// million avatars take seconds rather than hours.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { Redis } from 'ioredis';
import pg from 'pg';
import { createAccount } from '../../server/src/domain/accounts.ts';
import { systemClock } from '../../server/src/domain/clock.ts';
import { periodOf } from '../../server/src/domain/credits.ts';
import { buildTerminalEvent } from '../../server/src/domain/events.ts';
import { newAvatarId, newKeyId, randomSuffix } from '../../server/src/domain/ids.ts';
import { KEY_DISPLAY_LENGTH, generateApiKey, hashApiKey } from '../../server/src/domain/keys.ts';
import type { AvatarInput, Job, RatePlan } from '../../server/src/domain/model.ts';
import { EMBEDDED_FILE } from '../../server/src/runtime.ts';
import { openDatabase } from '../../server/src/storage/embedded/database.ts';
import { createEmbeddedStore } from '../../server/src/storage/embedded/index.ts';
import { createPostgresRedisStore } from '../../server/src/storage/postgres/index.ts';
import type { Store } from '../../server/src/domain/ports.ts';

export const DATABASE_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
export const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';

export type StoreKind = 'embedded' | 'pg';
export const STORE_LABEL: Record<StoreKind, string> = { embedded: 'embedded (SQLite)', pg: 'PostgreSQL + Redis' };

/** A plan whose limits are never reached in a run: the limiter counts every request but never refuses. */
export const GENEROUS_PLAN: RatePlan = {
  read: { minute: 1_000_000_000, day: 1_000_000_000 },
  generation: { minute: 1_000_000_000, day: 1_000_000_000 },
};
/** Credits for every job a run can create (10 per avatar); the ledger is still updated per job. */
export const BIG_CREDITS = 1_000_000_000;

/** The avatar every seeded row describes (a valid props avatar). */
export const SEED_INPUT: AvatarInput = { type: 'props', name: 'Bench avatar', ethnicity: 'Hispanic', sex: 'male', age: 34 };
const AVATAR_CREDITS = 10;
const INSERT_BATCH = 5_000;

export interface Owner {
  accountId: string;
  keyId: string;
  apiKey: string;
  signingSecret: string;
}

export interface JobProgress {
  total: number;
  terminal: number;
  minCreatedAt: number | null;
  minCompletedAt: number | null;
  maxCompletedAt: number | null;
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
  try {
    for (let i = 0; i < samples; i++) {
      const now = Date.now();
      const started = performance.now();
      const job = await store.jobs.claimJob('bench-claim-probe', now, now + 60_000);
      times.push(performance.now() - started);
      // Only called with nothing queued; should a job turn up, hand it straight back.
      if (job) await store.jobs.releaseLease(job.id, 'bench-claim-probe', Date.now());
    }
  } finally {
    await store.close();
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)]!;
}

async function makeOwner(store: Store, options: { name: string; plan?: RatePlan; monthlyCredits?: number }): Promise<Owner> {
  try {
    const created = await createAccount(store, systemClock, {
      name: options.name,
      mode: 'sandbox',
      plan: options.plan ?? GENEROUS_PLAN,
      monthlyCredits: options.monthlyCredits ?? BIG_CREDITS,
    });
    return { accountId: created.account_id, keyId: created.key_id, apiKey: created.api_key, signingSecret: created.signing_secret };
  } finally {
    await store.close();
  }
}

function newKeys(count: number): { id: string; key: string; hash: string; prefix: string }[] {
  return Array.from({ length: count }, () => {
    const key = generateApiKey('sandbox');
    return { id: newKeyId(), key, hash: hashApiKey(key), prefix: key.slice(0, KEY_DISPLAY_LENGTH) };
  });
}

/** Ready avatar jobs with a webhook URL and their terminal events, built by the server's own serializer. */
function readyJobsWithEvents(owner: Owner, count: number, url: string, publicBaseUrl: string) {
  const now = Date.now();
  return Array.from({ length: count }, (_, i) => {
    const at = now - count + i;
    const job: Job = {
      id: newAvatarId(),
      kind: 'avatar',
      accountId: owner.accountId,
      keyId: owner.keyId,
      sandbox: true,
      status: 'ready',
      input: SEED_INPUT,
      webhookUrl: url,
      credits: AVATAR_CREDITS,
      period: periodOf(now),
      error: null,
      result: {},
      createdAt: at,
      updatedAt: at,
      completedAt: at,
      attempts: 1,
    };
    return { job, event: buildTerminalEvent(job, publicBaseUrl, at)! };
  });
}

// --- embedded -------------------------------------------------------------------------

export function createEmbeddedBenchStore(): BenchStore {
  const dir = mkdtempSync(join(tmpdir(), 'avatar-bench-'));
  const file = join(dir, EMBEDDED_FILE);
  let reader: DatabaseSync | undefined;
  const read = () => (reader ??= new DatabaseSync(file, { readOnly: true }));
  const write = <T>(work: (db: DatabaseSync) => T): T => {
    const db = openDatabase(file);
    try {
      db.exec('BEGIN IMMEDIATE');
      const result = work(db);
      db.exec('COMMIT');
      return result;
    } catch (error) {
      if (db.isTransaction) db.exec('ROLLBACK');
      throw error;
    } finally {
      db.close();
    }
  };

  return {
    kind: 'embedded',
    label: STORE_LABEL.embedded,
    env: { DATA_DIR: dir },
    createOwner: (options) => makeOwner(createEmbeddedStore(file), options),
    async seedAvatars(owner, count) {
      const now = Date.now();
      write((db) =>
        db
          .prepare(`
            INSERT INTO jobs (id, kind, account_id, key_id, sandbox, status, input, webhook_url, credits, period, error, result, created_at, updated_at, completed_at, attempts)
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
            SELECT 'av_' || lower(hex(randomblob(12))), 'avatar', ?, ?, 1, 'ready', ?, NULL, ?, ?, NULL, '{}', ?, ?, ?, 1 FROM n`)
          .run(count, owner.accountId, owner.keyId, JSON.stringify(SEED_INPUT), AVATAR_CREDITS, periodOf(now), now, now, now),
      );
    },
    async sampleAvatarIds(owner, count) {
      const rows = read().prepare(`SELECT id FROM jobs WHERE account_id = ? AND kind = 'avatar' ORDER BY random() LIMIT ?`).all(owner.accountId, count);
      return rows.map((row) => String(row.id));
    },
    async seedKeys(owner, count) {
      const keys = newKeys(count);
      const now = Date.now();
      write((db) => {
        const insert = db.prepare(`INSERT INTO api_keys (id, account_id, mode, prefix, hash, created_at) VALUES (?, ?, 'sandbox', ?, ?, ?)`);
        for (const k of keys) insert.run(k.id, owner.accountId, k.prefix, k.hash, now);
      });
      return keys.map((k) => k.key);
    },
    async seedQueuedJobs(owner, count) {
      const now = Date.now();
      const period = periodOf(now);
      write((db) => {
        const insert = db.prepare(`
          INSERT INTO jobs (id, kind, account_id, key_id, sandbox, status, input, webhook_url, credits, period, created_at, updated_at, attempts)
          VALUES (?, 'avatar', ?, ?, 1, 'queued', ?, NULL, ?, ?, ?, ?, 0)`);
        const input = JSON.stringify(SEED_INPUT);
        for (let i = 0; i < count; i++) insert.run(newAvatarId(), owner.accountId, owner.keyId, input, AVATAR_CREDITS, period, now - count + i, now - count + i);
        db.prepare(`
          INSERT INTO credit_ledger (account_id, period, reserved) VALUES (?, ?, ?)
          ON CONFLICT (account_id, period) DO UPDATE SET reserved = reserved + excluded.reserved`).run(owner.accountId, period, count * AVATAR_CREDITS);
      });
    },
    async seedPendingEvents(owner, count, url, publicBaseUrl) {
      const rows = readyJobsWithEvents(owner, count, url, publicBaseUrl);
      write((db) => {
        const job = db.prepare(`
          INSERT INTO jobs (id, kind, account_id, key_id, sandbox, status, input, webhook_url, credits, period, result, created_at, updated_at, completed_at, attempts)
          VALUES (?, 'avatar', ?, ?, 1, 'ready', ?, ?, ?, ?, '{}', ?, ?, ?, 1)`);
        const event = db.prepare(`
          INSERT INTO webhook_events (id, type, job_id, account_id, url, destination, payload, status, attempts, next_attempt_at, created_at)
          VALUES (?, ?, ?, ?, ?, ?, ?, 'pending', 0, ?, ?)`);
        for (const { job: j, event: e } of rows) {
          job.run(j.id, j.accountId, j.keyId, JSON.stringify(j.input), j.webhookUrl, j.credits, j.period, j.createdAt, j.updatedAt, j.completedAt);
          event.run(e.id, e.type, e.jobId, e.accountId, e.url, e.destination, e.payload, e.nextAttemptAt, e.createdAt);
        }
      });
    },
    async jobProgress(owner) {
      const row = read()
        .prepare(`
          SELECT COUNT(*) AS total, COALESCE(SUM(status IN ('ready', 'failed')), 0) AS terminal,
                 MIN(created_at) AS min_created, MIN(completed_at) AS min_completed, MAX(completed_at) AS max_completed
          FROM jobs WHERE account_id = ?`)
        .get(owner.accountId)!;
      return progressOf(row);
    },
    async jobTimes(owner) {
      const rows = read().prepare(`SELECT created_at, completed_at FROM jobs WHERE account_id = ? AND completed_at IS NOT NULL`).all(owner.accountId);
      return rows.map((r) => ({ createdAt: Number(r.created_at), completedAt: Number(r.completed_at) }));
    },
    async eventCounts(owner) {
      const rows = read().prepare(`SELECT status, COUNT(*) AS n FROM webhook_events WHERE account_id = ? GROUP BY status`).all(owner.accountId);
      return Object.fromEntries(rows.map((r) => [String(r.status), Number(r.n)]));
    },
    idleClaimMs: (samples = 5) => timeIdleClaims(createEmbeddedStore(file), samples),
    async drop() {
      if (reader?.isOpen) reader.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function progressOf(row: Record<string, unknown>): JobProgress {
  const n = (v: unknown) => (v === null || v === undefined ? null : Number(v));
  return { total: Number(row.total), terminal: Number(row.terminal), minCreatedAt: n(row.min_created), minCompletedAt: n(row.min_completed), maxCompletedAt: n(row.max_completed) };
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
  const open = () => createPostgresRedisStore({ databaseUrl, redisUrl: REDIS_URL, redisPrefix: prefix });
  // Migrations run once here, so the bench's own pool below finds the tables.
  await (await open()).close();
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 2 });
  pool.on('error', () => undefined);
  const q = (text: string, values: unknown[] = []) => pool.query(text, values);

  return {
    kind: 'pg',
    label: STORE_LABEL.pg,
    env: { DATABASE_URL: databaseUrl, REDIS_URL, REDIS_PREFIX: prefix },
    createOwner: async (options) => makeOwner(await open(), options),
    async seedAvatars(owner, count) {
      const now = Date.now();
      // md5 gives [0-9a-f]: 24 of them fit the ID pattern av_[a-z0-9]{24}.
      await q(
        `INSERT INTO jobs (id, kind, account_id, key_id, sandbox, status, input, webhook_url, credits, period, error, result, created_at, updated_at, completed_at, attempts)
         SELECT 'av_' || substr(md5(random()::text || i::text), 1, 24), 'avatar', $1, $2, true, 'ready', $3::jsonb, NULL, $4, $5, NULL, '{}'::jsonb, $6, $6, $6, 1
         FROM generate_series(1, $7::int) AS i`,
        [owner.accountId, owner.keyId, JSON.stringify(SEED_INPUT), AVATAR_CREDITS, periodOf(now), now, count],
      );
      await q('ANALYZE jobs');
    },
    async sampleAvatarIds(owner, count) {
      const r = await q(`SELECT id FROM jobs WHERE account_id = $1 AND kind = 'avatar' ORDER BY random() LIMIT $2`, [owner.accountId, count]);
      return r.rows.map((row: Record<string, unknown>) => String(row.id));
    },
    async seedKeys(owner, count) {
      const keys = newKeys(count);
      const now = Date.now();
      for (let i = 0; i < keys.length; i += INSERT_BATCH) {
        const batch = keys.slice(i, i + INSERT_BATCH);
        await q(
          `INSERT INTO api_keys (id, account_id, mode, prefix, hash, created_at)
           SELECT id, $1, 'sandbox', prefix, hash, $2 FROM unnest($3::text[], $4::text[], $5::text[]) AS k(id, prefix, hash)`,
          [owner.accountId, now, batch.map((k) => k.id), batch.map((k) => k.prefix), batch.map((k) => k.hash)],
        );
      }
      return keys.map((k) => k.key);
    },
    async seedQueuedJobs(owner, count) {
      const now = Date.now();
      const period = periodOf(now);
      const ids = Array.from({ length: count }, () => newAvatarId());
      for (let i = 0; i < ids.length; i += INSERT_BATCH) {
        const batch = ids.slice(i, i + INSERT_BATCH);
        await q(
          `INSERT INTO jobs (id, kind, account_id, key_id, sandbox, status, input, webhook_url, credits, period, created_at, updated_at, attempts)
           SELECT id, 'avatar', $1, $2, true, 'queued', $3::jsonb, NULL, $4, $5, $6::bigint + n, $6::bigint + n, 0
           FROM unnest($7::text[]) WITH ORDINALITY AS j(id, n)`,
          [owner.accountId, owner.keyId, JSON.stringify(SEED_INPUT), AVATAR_CREDITS, period, now - count + i, batch],
        );
      }
      await q(
        `INSERT INTO credit_ledger (account_id, period, reserved) VALUES ($1, $2, $3)
         ON CONFLICT (account_id, period) DO UPDATE SET reserved = credit_ledger.reserved + excluded.reserved`,
        [owner.accountId, period, count * AVATAR_CREDITS],
      );
    },
    async seedPendingEvents(owner, count, hookUrl, publicBaseUrl) {
      const rows = readyJobsWithEvents(owner, count, hookUrl, publicBaseUrl);
      for (let i = 0; i < rows.length; i += INSERT_BATCH) {
        const batch = rows.slice(i, i + INSERT_BATCH);
        const first = batch[0]!.job;
        await q(
          `INSERT INTO jobs (id, kind, account_id, key_id, sandbox, status, input, webhook_url, credits, period, result, created_at, updated_at, completed_at, attempts)
           SELECT id, 'avatar', $1, $2, true, 'ready', $3::jsonb, $4, $5, $6, '{}'::jsonb, at, at, at, 1
           FROM unnest($7::text[], $8::bigint[]) AS j(id, at)`,
          [first.accountId, first.keyId, JSON.stringify(SEED_INPUT), hookUrl, AVATAR_CREDITS, first.period, batch.map((r) => r.job.id), batch.map((r) => r.job.completedAt)],
        );
        await q(
          `INSERT INTO webhook_events (id, type, job_id, account_id, url, destination, payload, status, attempts, next_attempt_at, created_at)
           SELECT id, 'avatar.ready', job_id, $1, $2, $7, payload, 'pending', 0, at, at
           FROM unnest($3::text[], $4::text[], $5::text[], $6::bigint[]) AS e(id, job_id, payload, at)`,
          [first.accountId, hookUrl, batch.map((r) => r.event.id), batch.map((r) => r.event.jobId), batch.map((r) => r.event.payload), batch.map((r) => r.event.nextAttemptAt), batch[0]!.event.destination],
        );
      }
    },
    async jobProgress(owner) {
      const r = await q(
        `SELECT COUNT(*) AS total, COUNT(*) FILTER (WHERE status IN ('ready', 'failed')) AS terminal,
                MIN(created_at) AS min_created, MIN(completed_at) AS min_completed, MAX(completed_at) AS max_completed
         FROM jobs WHERE account_id = $1`,
        [owner.accountId],
      );
      return progressOf(r.rows[0]);
    },
    async jobTimes(owner) {
      const r = await q(`SELECT created_at, completed_at FROM jobs WHERE account_id = $1 AND completed_at IS NOT NULL`, [owner.accountId]);
      return r.rows.map((row: Record<string, unknown>) => ({ createdAt: Number(row.created_at), completedAt: Number(row.completed_at) }));
    },
    async eventCounts(owner) {
      const r = await q(`SELECT status, COUNT(*) AS n FROM webhook_events WHERE account_id = $1 GROUP BY status`, [owner.accountId]);
      return Object.fromEntries(r.rows.map((row: Record<string, unknown>) => [String(row.status), Number(row.n)]));
    },
    idleClaimMs: async (samples = 5) => timeIdleClaims(await open(), samples),
    async drop() {
      await pool.end().catch(() => undefined);
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
