// A sandbox of the service inside the page or the test process: the server's own use
// cases (admission and rate limits, credits, jobs, idempotency, lists, the sandbox clock)
// over the in-memory store, with a clock the test moves. Jobs advance when something
// asks (each request, each move of the clock), never on a timer of their own, so a
// polling UI under fake timers sees queued, processing and ready in milliseconds.
import { randomBytes } from 'node:crypto';
import { createAccount as createServiceAccount, type CreatedAccount } from '../../server/src/domain/accounts.ts';
import { finishJob } from '../../server/src/domain/completion.ts';
import type { DomainDeps } from '../../server/src/domain/deps.ts';
import type { EngineOutcome } from '../../server/src/domain/engine.ts';
import { accountLinks } from '../../server/src/domain/fileLinks.ts';
import { createFinishedRecords } from '../../server/src/domain/finishedRecords.ts';
import { createKeyCache } from '../../server/src/domain/keyCache.ts';
import type { AvatarInput, Job, RatePlan, VideoInput } from '../../server/src/domain/model.ts';
import { DEFAULT_PLAN } from '../../server/src/domain/rateLimits.ts';
import { createAvatar } from '../../server/src/domain/jobs.ts';
import { hashApiKey } from '../../server/src/domain/keys.ts';
import type { Caller } from '../../server/src/domain/deps.ts';
import { toAvatarResource, type AvatarResource } from '../../server/src/domain/serialize.ts';
import { videoDurationSeconds } from '../../server/src/engine/timeline.ts';
import { createMemoryStore, type MemoryStore } from '../../server/src/storage/memory/index.ts';
import { SANDBOX_FAILURE_MARKER } from '../../contract/sandbox.ts';

export interface SandboxOptions {
  /** Scheme, host and port the handlers answer for, and the records' file URLs use. */
  baseUrl?: string;
  /**
   * Where the service's time starts. By default it follows `Date.now()` (which fake
   * timers move) plus every `clock.advance`; give a time to freeze it there instead, so
   * that only `clock.advance` and `clock.set` move it.
   */
  startAt?: Date | number;
  /** How long an avatar takes from create to ready, in seconds of the account's time (default 5). */
  avatarSeconds?: number;
  /** How long a video takes from create to ready, in seconds of the account's time (default 10). */
  videoSeconds?: number;
}

export interface AccountOptions {
  /** Credits a month (default 1000: 100 avatars or 50 videos). */
  credits?: number;
  /** The rate plan (default: the service's, 10 creates and 120 reads a minute). */
  plan?: RatePlan;
  name?: string;
}

export interface SandboxAccount {
  /** The sandbox key to send as `Authorization: Bearer <apiKey>`. */
  apiKey: string;
  accountId: string;
}

/** What happens to one job: how long it takes and how it ends. */
interface JobPlan {
  durationMs: number;
  fail?: { code: string; message: string };
}

export interface SandboxClock {
  /** The service's time now (an account that moved its own sandbox clock is ahead of it). */
  now(): number;
  /** Moves the service's time forward by `ms`, then advances the jobs that became due. */
  advance(ms: number): Promise<void>;
  /** Moves the service's time forward to `at` (never back), then advances the jobs. */
  set(at: Date | number): Promise<void>;
}

/** Each job stays queued this long (or its whole duration, if shorter) before it is processing. */
const QUEUED_MS = 1000;

export class Sandbox {
  readonly baseUrl: string;
  readonly store: MemoryStore;
  readonly deps: DomainDeps;
  readonly clock: SandboxClock;
  private movedMs = 0;
  private readonly frozenAt: number | undefined;
  private readonly durations: Record<Job['kind'], number>;
  private readonly plans = new Map<string, JobPlan>();
  /** What the next jobs created will do, first in first out. */
  private readonly upcoming: Partial<JobPlan>[] = [];
  private ticking: Promise<void> = Promise.resolve();

  constructor(options: SandboxOptions = {}) {
    this.baseUrl = (options.baseUrl ?? defaultBaseUrl()).replace(/\/+$/, '');
    this.frozenAt = options.startAt === undefined ? undefined : new Date(options.startAt).getTime();
    this.durations = { avatar: (options.avatarSeconds ?? 5) * 1000, avatar_video: (options.videoSeconds ?? 10) * 1000 };
    this.store = createMemoryStore();
    const now = () => (this.frozenAt ?? Date.now()) + this.movedMs;
    this.clock = {
      now,
      advance: async (ms) => {
        if (!(ms >= 0)) throw new RangeError('the sandbox clock moves forward only');
        this.movedMs += ms;
        await this.tick();
      },
      set: async (at) => {
        const target = new Date(at).getTime();
        if (target > now()) this.movedMs += target - now();
        await this.tick();
      },
    };
    this.deps = {
      store: this.store,
      keys: createKeyCache(),
      finished: createFinishedRecords(),
      clock: { now },
      publicBaseUrl: this.baseUrl,
      // A key of this sandbox's own: its links are good in this sandbox alone, as a server's are on its store.
      fileLinkKey: randomBytes(32).toString('base64url'),
      mode: 'sandbox',
      onJobQueued: () => undefined,
      // A move of an account's own sandbox clock (the contract's operation) can make its jobs due.
      onClockAdvanced: () => void this.tick(),
    };
  }

  /** A new account with a sandbox key; `credits` a month (default 1000). */
  async createAccount(options: AccountOptions = {}): Promise<SandboxAccount> {
    const created: CreatedAccount = await createServiceAccount(this.store, this.deps.clock, {
      name: options.name,
      monthlyCredits: options.credits ?? 1000,
      plan: options.plan ?? DEFAULT_PLAN,
      mode: 'sandbox',
    });
    return { apiKey: created.api_key, accountId: created.account_id };
  }

  /** The next job created (by any account) fails, with `sandbox_forced_failure` unless another code is given. */
  failNextJob(error: { code?: string; message?: string } = {}): void {
    this.upcoming.push({
      fail: { code: error.code ?? 'sandbox_forced_failure', message: error.message ?? 'The sandbox was told to fail this job.' },
    });
  }

  /** The next job created (by any account) takes `seconds` from create to its end. */
  nextJobTakes(seconds: number): void {
    this.upcoming.push({ durationMs: seconds * 1000 });
  }

  /**
   * Ready avatars for the account, made as a create makes them (each costs its credits,
   * counted in no rate-limit window), one per name, a millisecond of the
   * sandbox's time apart. Answers them as GET would, in the order given.
   */
  async seedReadyAvatars(account: SandboxAccount, names: readonly string[]): Promise<AvatarResource[]> {
    const caller = await this.callerOf(account);
    const made: string[] = [];
    for (const [i, name] of names.entries()) {
      // A millisecond apart, so a list (newest first) shows them in the order given, reversed.
      if (i > 0) this.movedMs += 1;
      const { record } = await createAvatar(this.deps, caller, { type: 'prompt', name, prompt: `A portrait of ${name}` });
      this.plans.set(record.id, { durationMs: 0 });
      made.push(record.id);
    }
    await this.tick();
    const ready: AvatarResource[] = [];
    for (const id of made) {
      const job = await this.store.jobs.getJob(id);
      ready.push(accountLinks(this.deps, caller.account).record(toAvatarResource(job!, this.baseUrl)));
    }
    return ready;
  }

  private async callerOf(account: SandboxAccount): Promise<Caller> {
    const record = await this.store.accounts.findKeyByHash(hashApiKey(account.apiKey));
    if (!record) throw new Error('no live key of this sandbox matches the account given');
    return { account: record.account, key: record.key };
  }

  /** Called by the handlers after a create: the job takes what was asked for it. */
  planJob(job: Pick<Job, 'id' | 'kind'>): void {
    const asked = this.upcoming.shift() ?? {};
    this.plans.set(job.id, { durationMs: asked.durationMs ?? this.durations[job.kind], fail: asked.fail });
  }

  /**
   * Advances every job whose time has come, on its account's clock: queued for the first
   * second, then processing, then ready or failed when its duration has passed. The
   * queue is first in, first out, as the service's is. Runs one at a time.
   */
  tick(): Promise<void> {
    this.ticking = this.ticking.then(() => this.advanceJobs());
    return this.ticking;
  }

  private async advanceJobs(): Promise<void> {
    const worker = 'msw-sandbox';
    const forever = Number.MAX_SAFE_INTEGER;
    let queueOpen = true;
    for (const job of this.store.activeJobs()) {
      const account = await this.store.accounts.getAccount(job.accountId);
      const accountNow = this.deps.clock.now() + (account?.clockOffsetMs ?? 0);
      const plan = this.plans.get(job.id) ?? { durationMs: this.durations[job.kind] };
      const elapsed = accountNow - job.createdAt;
      let current: Job | null = job;
      if (job.status === 'queued') {
        if (!queueOpen || elapsed < Math.min(QUEUED_MS, plan.durationMs)) {
          queueOpen = false; // a later job never starts before an earlier one
          continue;
        }
        current = await this.store.jobs.claimJob(worker, this.deps.clock.now(), forever);
      }
      if (current && elapsed >= plan.durationMs) {
        await finishJob(this.deps, current, outcomeOf(current, plan));
        this.plans.delete(current.id);
      }
    }
  }
}

function outcomeOf(job: Job, plan: JobPlan): EngineOutcome {
  if (plan.fail) return { status: 'failed', error: plan.fail };
  // The built-in engine's rule (ND-SANDBOX-FAILURE): the marker in a sandbox job's text fails it.
  const text = job.kind === 'avatar' ? (job.input as AvatarInput).name : (job.input as VideoInput).script;
  if (job.sandbox && text.includes(SANDBOX_FAILURE_MARKER)) {
    return { status: 'failed', error: { code: 'sandbox_forced_failure', message: `The request contains the sandbox failure marker ${SANDBOX_FAILURE_MARKER}.` } };
  }
  if (job.kind === 'avatar') return { status: 'ready', result: {} };
  return { status: 'ready', result: { duration_seconds: videoDurationSeconds((job.input as VideoInput).script) } };
}

function defaultBaseUrl(): string {
  const origin = (globalThis as { location?: { origin?: string } }).location?.origin;
  return origin && origin !== 'null' ? origin : 'http://127.0.0.1:8080';
}
