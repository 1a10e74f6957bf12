// The in-memory store: every port of domain/ports.ts over plain maps, for one process
// or one page (the MSW package runs the service's use cases on it in a browser or a
// unit test). Nothing here is awaited between a read and its write, so each method is
// atomic on the event loop as the other stores' transactions are. Nothing survives the
// process: it is a sandbox's store, never a service's.
import { withinCreditBound } from '../../domain/credits.ts';
import type { Account, ApiKey, AttemptLog, CreditBalance, Job, LoggedAttempt, OutboxEvent, WindowName } from '../../domain/model.ts';
import type {
  AccountStore,
  ClockMoved,
  CreditsChanged,
  FileStore,
  IdempotentRequest,
  JobStore,
  KeyRecord,
  RateLimitStore,
  Store,
  WebhookOutbox,
} from '../../domain/ports.ts';
import { WINDOWS, decide, windowStart } from '../../domain/rateLimits.ts';
import { fullDestinations, pickFairly, type DestinationHealth } from '../../domain/webhookDestinations.ts';
import { MAX_KEPT_ATTEMPTS } from '../../domain/webhookLog.ts';
import { claimEach } from '../claims.ts';

interface StoredKey extends ApiKey {
  hash: string;
}

interface StoredJob extends Job {
  queuedAt: number;
  leaseOwner: string | null;
  leaseUntil: number | null;
}

interface StoredEvent extends OutboxEvent {
  leaseUntil: number | null;
}

interface Ledger {
  granted: number;
  reserved: number;
  used: number;
}

/** What the sandbox around the store reads besides the ports: the jobs not finished yet. */
export interface MemoryStore extends Store {
  /** Queued and processing jobs, first queued first. */
  activeJobs(): Job[];
}

const copy = <T>(value: T): T => structuredClone(value);

/** A kept file is read in pieces of this size, as the other stores read theirs. */
const FILE_PIECE_BYTES = 64 * 1024;

/** Newest first (created_at, then id, both descending), after `after`, at most `limit`. */
function newestFirst<T extends { createdAt: number; id: string }>(rows: Iterable<T>, after: { createdAt: number; id: string } | undefined, limit: number): T[] {
  const before = (r: T) => !after || r.createdAt < after.createdAt || (r.createdAt === after.createdAt && r.id < after.id);
  return [...rows]
    .filter(before)
    .sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0))
    .slice(0, limit);
}

export function createMemoryStore(): MemoryStore {
  const accounts = new Map<string, Account>();
  const keys = new Map<string, StoredKey>();
  const jobs = new Map<string, StoredJob>();
  const ledgers = new Map<string, Ledger>();
  const idempotency = new Map<string, IdempotentRequest & { accountId: string }>();
  const events = new Map<string, StoredEvent>();
  /** Each event's logged attempts, its latest MAX_KEPT_ATTEMPTS, in the order they were made. */
  const attempts = new Map<string, LoggedAttempt[]>();
  const destinationFailures = new Map<string, number>();
  const counters = new Map<string, { windowStart: number; count: number }>();
  const files = new Map<string, { contentType: string; bytes: Uint8Array }>();
  let linkKey: string | undefined;
  // One version for every account, as the embedded store keeps: any change to an account or a key moves it.
  let version = 0;
  let closed = false;

  const ledgerOf = (accountId: string, period: string): Ledger => {
    const id = `${accountId}\u0000${period}`;
    let ledger = ledgers.get(id);
    if (!ledger) ledgers.set(id, (ledger = { granted: 0, reserved: 0, used: 0 }));
    return ledger;
  };
  const balance = (accountId: string, period: string): CreditBalance => {
    const account = accounts.get(accountId);
    if (!account) return { period, quota: 0, reserved: 0, used: 0, available: 0 };
    const ledger = ledgers.get(`${accountId}\u0000${period}`) ?? { granted: 0, reserved: 0, used: 0 };
    const quota = account.monthlyCredits + ledger.granted;
    return { period, quota, reserved: ledger.reserved, used: ledger.used, available: Math.max(0, quota - ledger.reserved - ledger.used) };
  };
  const jobOf = ({ queuedAt: _q, leaseOwner: _o, leaseUntil: _u, ...job }: StoredJob): Job => copy(job);
  const eventOf = ({ leaseUntil: _u, ...event }: StoredEvent): OutboxEvent => copy(event);
  const changing = (changed: boolean) => {
    if (changed) version++;
    return changed;
  };
  /** Logs the event's `number`th attempt, and forgets those older than its latest MAX_KEPT_ATTEMPTS. */
  const log = (eventId: string, number: number, attempt: AttemptLog) => {
    const logged = attempts.get(eventId) ?? [];
    logged.push({ ...attempt, eventId, number });
    attempts.set(eventId, logged.filter((a) => a.number > number - MAX_KEPT_ATTEMPTS));
  };
  const judge = (destination: string, health: DestinationHealth): number => {
    if (health === 'down') destinationFailures.set(destination, (destinationFailures.get(destination) ?? 0) + 1);
    if (health === 'up') destinationFailures.delete(destination);
    return destinationFailures.get(destination) ?? 0;
  };

  const accountStore: AccountStore = {
    async createAccount(a) {
      if (accounts.has(a.id)) throw new Error(`account ${a.id} exists`);
      if (a.ownerId !== null) {
        const owner = accounts.get(a.ownerId);
        if (!owner) return { ok: false, reason: 'owner_not_found' };
        if (owner.ownerId !== null) return { ok: false, reason: 'owner_is_workspace' };
      }
      accounts.set(a.id, { ...copy(a), clockOffsetMs: 0, standardWebhooks: false });
      return { ok: true };
    },
    async getAccount(id) {
      const account = accounts.get(id);
      return account ? copy(account) : null;
    },
    async listAccounts() {
      return [...accounts.values()].sort((a, b) => a.createdAt - b.createdAt).map(copy);
    },
    async listWorkspaces(ownerId) {
      return [...accounts.values()]
        .filter((a) => a.ownerId === ownerId)
        .sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
        .map(copy);
    },
    async countAccounts() {
      return accounts.size;
    },
    async createKey(k) {
      if (k.mode === 'live' && (accounts.get(k.accountId)?.clockOffsetMs ?? 0) > 0) return false;
      keys.set(k.id, { id: k.id, accountId: k.accountId, mode: k.mode, prefix: k.prefix, createdAt: k.createdAt, revokedAt: null, hash: k.hash });
      return true;
    },
    async findKeyByHash(hash): Promise<KeyRecord | null> {
      const key = [...keys.values()].find((k) => k.hash === hash && k.revokedAt === null);
      const account = key && accounts.get(key.accountId);
      if (!key || !account) return null;
      const { hash: _hash, ...shown } = key;
      return { key: copy(shown), account: copy(account), version };
    },
    async revokeKey(keyId, at) {
      const key = keys.get(keyId);
      if (!key || key.revokedAt !== null) return false;
      key.revokedAt = at;
      return changing(true);
    },
    async setPlan(accountId, plan) {
      const account = accounts.get(accountId);
      if (account) account.plan = copy(plan);
      return changing(account !== undefined);
    },
    async setMonthlyCredits(accountId, credits): Promise<CreditsChanged> {
      const account = accounts.get(accountId);
      if (!account) return { ok: false, reason: 'not_found' };
      // The month with the most granted is the one the new monthly credits would take furthest.
      let most = { period: '', granted: 0 };
      for (const [id, ledger] of ledgers) {
        if (id.startsWith(`${accountId}\u0000`) && ledger.granted > most.granted) most = { period: id.slice(accountId.length + 1), granted: ledger.granted };
      }
      if (!withinCreditBound(credits, most.granted)) return { ok: false, reason: 'beyond_bound', period: most.period, monthly: account.monthlyCredits, granted: most.granted };
      account.monthlyCredits = credits;
      changing(true);
      return { ok: true };
    },
    async grantCredits(accountId, period, credits): Promise<CreditsChanged> {
      const account = accounts.get(accountId);
      if (!account) return { ok: false, reason: 'not_found' };
      const granted = ledgers.get(`${accountId}\u0000${period}`)?.granted ?? 0;
      if (!withinCreditBound(account.monthlyCredits, granted, credits)) return { ok: false, reason: 'beyond_bound', period, monthly: account.monthlyCredits, granted };
      ledgerOf(accountId, period).granted += credits;
      return { ok: true };
    },
    async setSigningSecret(accountId, secret) {
      const account = accounts.get(accountId);
      if (account) account.signingSecret = secret;
      return changing(account !== undefined);
    },
    async setStandardWebhooks(accountId, on) {
      const account = accounts.get(accountId);
      if (account) account.standardWebhooks = on;
      return changing(account !== undefined);
    },
    async advanceClock(accountId, move, maxOffsetMs): Promise<ClockMoved> {
      const account = accounts.get(accountId);
      if (!account) return { ok: false, reason: 'not_found' };
      if ([...keys.values()].some((k) => k.accountId === accountId && k.mode === 'live' && k.revokedAt === null)) return { ok: false, reason: 'live_key' };
      const current = account.clockOffsetMs;
      const offsetMs = 'byMs' in move ? current + move.byMs : Math.max(current, move.toOffsetMs);
      if (offsetMs > maxOffsetMs) return { ok: false, reason: 'offset_limit', offsetMs: current };
      const movedMs = offsetMs - current;
      if (movedMs > 0) {
        account.clockOffsetMs = offsetMs;
        for (const e of events.values()) if (e.accountId === accountId && e.status === 'pending' && e.leaseUntil === null) e.nextAttemptAt -= movedMs;
        version++;
      }
      return { ok: true, offsetMs, movedMs };
    },
  };

  const keptKey = (accountId: string, key: string, now: number) => {
    const kept = idempotency.get(`${accountId}\u0000${key}`);
    return kept && kept.expiresAt > now ? kept : undefined;
  };

  /** The runnable job queued first, claimed for `workerId` (claimJob). */
  function claimOne(workerId: string, now: number, leaseUntil: number, skipVideosOf: readonly string[]): Job | null {
    const runnable = [...jobs.values()]
      .filter((j) => j.status === 'queued' || (j.status === 'processing' && (j.leaseUntil ?? 0) < now))
      .filter((j) => j.kind !== 'avatar_video' || !skipVideosOf.includes(j.accountId))
      .sort((a, b) => a.queuedAt - b.queuedAt)[0];
    if (!runnable) return null;
    // The record's times are its account's: the claim's time moved by the account's clock.
    if (runnable.status === 'queued') runnable.updatedAt = now + (accounts.get(runnable.accountId)?.clockOffsetMs ?? 0);
    runnable.status = 'processing';
    runnable.attempts += 1;
    runnable.leaseOwner = workerId;
    runnable.leaseUntil = leaseUntil;
    return jobOf(runnable);
  }

  const jobStore: JobStore = {
    async createJobReservingCredits(job, queuedAt, claim) {
      const kept = claim && keptKey(job.accountId, claim.key, job.createdAt);
      if (kept) {
        const { accountId: _a, ...request } = kept;
        return { ok: false, kept: copy(request) };
      }
      const before = balance(job.accountId, job.period);
      if (before.available < job.credits) return { ok: false, balance: before };
      ledgerOf(job.accountId, job.period).reserved += job.credits;
      jobs.set(job.id, { ...copy(job), attempts: 0, queuedAt, leaseOwner: null, leaseUntil: null });
      if (claim) {
        // An expired key of the account is taken over.
        idempotency.set(`${job.accountId}\u0000${claim.key}`, {
          accountId: job.accountId,
          key: claim.key,
          fingerprint: claim.fingerprint,
          jobId: job.id,
          response: claim.response,
          createdAt: job.createdAt,
          expiresAt: claim.expiresAt,
        });
      }
      return { ok: true, job: copy(job) };
    },
    async findIdempotentRequest(accountId, key, now) {
      const kept = keptKey(accountId, key, now);
      if (!kept) return null;
      const { accountId: _a, ...request } = kept;
      return copy(request);
    },
    async listJobs({ accountId, kind, limit, after, status, avatarId }) {
      const mine = [...jobs.values()].filter(
        (j) => j.accountId === accountId && j.kind === kind && (status === undefined || j.status === status) && (avatarId === undefined || (j.input as { avatar_id?: string }).avatar_id === avatarId),
      );
      return newestFirst(mine, after, limit).map(jobOf);
    },
    async getJob(id) {
      const job = jobs.get(id);
      return job ? jobOf(job) : null;
    },
    async claimJob(workerId, now, leaseUntil, skipVideosOf = []) {
      return claimOne(workerId, now, leaseUntil, skipVideosOf);
    },
    async claimJobs(workerId, now, leaseUntil, limit, skipVideosOf = []) {
      return claimEach(limit, skipVideosOf, (skip) => claimOne(workerId, now, leaseUntil, skip));
    },
    async renewLease(jobId, workerId, leaseUntil) {
      const job = jobs.get(jobId);
      if (!job || job.status !== 'processing' || job.leaseOwner !== workerId) return false;
      job.leaseUntil = leaseUntil;
      return true;
    },
    async releaseLease(jobId, workerId, now) {
      const job = jobs.get(jobId);
      if (!job || job.status !== 'processing' || job.leaseOwner !== workerId) return;
      // Back to the head of the queue; the attempt it used is given back too.
      job.leaseUntil = now - 1;
      job.leaseOwner = null;
      job.attempts = Math.max(job.attempts - 1, 0);
    },
    async completeJob(jobId, c, event) {
      const job = jobs.get(jobId);
      if (!job || job.status === 'ready' || job.status === 'failed') return false;
      // The other stores' foreign key: an event of no job is refused before anything changes.
      if (event && !jobs.has(event.jobId)) throw new Error(`the event ${event.id} names no job of the store (${event.jobId})`);
      Object.assign(job, { status: c.status, error: copy(c.error), result: copy(c.result), updatedAt: c.at, completedAt: c.at, leaseOwner: null, leaseUntil: null });
      // Capture on ready, release on failed: the reservation leaves `reserved` either way.
      const ledger = ledgerOf(job.accountId, job.period);
      ledger.reserved -= job.credits;
      if (c.status === 'ready') ledger.used += job.credits;
      if (event && !events.has(event.id)) events.set(event.id, { ...copy(event), leaseUntil: null });
      return true;
    },
    async countActiveJobs() {
      const all = [...jobs.values()];
      return { queued: all.filter((j) => j.status === 'queued').length, processing: all.filter((j) => j.status === 'processing').length };
    },
    async creditBalance(accountId, period) {
      return balance(accountId, period);
    },
  };

  const outbox: WebhookOutbox = {
    async claimDueEvents(now, limit, leaseUntil, fairness) {
      const inFlight = new Map<string, number>();
      for (const e of events.values()) {
        if (e.status === 'pending' && e.leaseUntil !== null && e.leaseUntil >= now) inFlight.set(e.destination, (inFlight.get(e.destination) ?? 0) + 1);
      }
      const load = { inFlight, failures: destinationFailures };
      const full = new Set(fullDestinations(load, fairness));
      const due = [...events.values()]
        .filter((e) => e.status === 'pending' && e.nextAttemptAt <= now && (e.leaseUntil === null || e.leaseUntil < now) && !full.has(e.destination))
        .sort((a, b) => a.nextAttemptAt - b.nextAttemptAt);
      const picked = pickFairly(due, load, fairness, limit);
      for (const e of picked) e.leaseUntil = leaseUntil;
      return picked.map((e) => {
        const account = accounts.get(e.accountId);
        return { ...eventOf(e), sender: account ? { signingSecret: account.signingSecret, clockOffsetMs: account.clockOffsetMs, standardWebhooks: account.standardWebhooks } : null };
      });
    },
    async markDelivered(deliveries) {
      for (const { eventId, at, attempts: count, attempt } of deliveries) {
        const e = events.get(eventId);
        if (!e) continue;
        Object.assign(e, { status: 'delivered', deliveredAt: at, attempts: count, leaseUntil: null, replay: false });
        log(eventId, count, attempt);
        destinationFailures.delete(e.destination);
      }
    },
    async scheduleRetry(id, count, retry, attempt, health) {
      const e = events.get(id);
      if (!e) return 0;
      log(id, count, attempt);
      const movedSince = (accounts.get(e.accountId)?.clockOffsetMs ?? retry.clockOffsetMs) - retry.clockOffsetMs;
      Object.assign(e, { attempts: count, nextAttemptAt: retry.at - movedSince, lastError: attempt.error, leaseUntil: null });
      return judge(e.destination, health);
    },
    async markFailed(id, count, attempt, health) {
      const e = events.get(id);
      if (!e) return 0;
      Object.assign(e, { status: 'failed', attempts: count, lastError: attempt.error, leaseUntil: null, replay: false });
      log(id, count, attempt);
      const failures = judge(e.destination, health);
      // A destination with nothing left to send starts afresh with its next event.
      if (![...events.values()].some((o) => o.destination === e.destination && o.status === 'pending')) destinationFailures.delete(e.destination);
      return failures;
    },
    async getEvent(id) {
      const e = events.get(id);
      return e ? eventOf(e) : null;
    },
    async listEvents({ accountId, limit, after, jobId, status }) {
      const mine = [...events.values()].filter((e) => e.accountId === accountId && (jobId === undefined || e.jobId === jobId) && (status === undefined || e.status === status));
      return newestFirst(mine, after, limit).map(eventOf);
    },
    async attemptsOf(eventIds) {
      return [...new Set(eventIds)].flatMap((id) => attempts.get(id) ?? []).map(copy);
    },
    async requestReplay(accountId, id, now) {
      const e = events.get(id);
      if (!e || e.accountId !== accountId) return { ok: false, reason: 'not_found' };
      if (e.status === 'pending') return { ok: false, reason: 'pending', event: eventOf(e) };
      Object.assign(e, { status: 'pending', nextAttemptAt: now, replay: true, leaseUntil: null });
      return { ok: true, event: eventOf(e) };
    },
    async nextDueAfter(now) {
      const later = [...events.values()].filter((e) => e.status === 'pending' && e.nextAttemptAt > now).map((e) => e.nextAttemptAt);
      return later.length > 0 ? Math.min(...later) : null;
    },
    async countPending() {
      return [...events.values()].filter((e) => e.status === 'pending').length;
    },
  };

  const fileStore: FileStore = {
    async putFile(jobId, name, contentType, body) {
      const pieces: Uint8Array[] = [];
      for await (const piece of body) pieces.push(piece);
      const bytes = new Uint8Array(pieces.reduce((n, p) => n + p.length, 0));
      let at = 0;
      for (const piece of pieces) {
        bytes.set(piece, at);
        at += piece.length;
      }
      // Set once whole: a reader sees the file before or after, never part of it.
      files.set(`${jobId}\u0000${name}`, { contentType, bytes });
    },
    // A memory store begins empty: nothing of an earlier shape to restore.
    filesToRestore: async () => [],
    fileRestored: async () => undefined,
    async linkKey(candidate) {
      linkKey ??= candidate;
      return linkKey;
    },
    async getFile(jobId, name) {
      const kept = files.get(`${jobId}\u0000${name}`);
      if (!kept) return null;
      return {
        contentType: kept.contentType,
        size: kept.bytes.length,
        async *read(start, end) {
          for (let at = start; at <= end; at += FILE_PIECE_BYTES) yield kept.bytes.slice(at, Math.min(end + 1, at + FILE_PIECE_BYTES));
        },
      };
    },
  };

  const windows = (keyId: string, bucket: string, now: number): Record<WindowName, { windowStart: number; count: number }> => {
    const out = {} as Record<WindowName, { windowStart: number; count: number }>;
    for (const w of WINDOWS) {
      const id = `${keyId}\u0000${bucket}\u0000${w}`;
      let counter = counters.get(id);
      const start = windowStart(w, now);
      if (!counter || counter.windowStart !== start) counters.set(id, (counter = { windowStart: start, count: 0 }));
      out[w] = counter;
    }
    return out;
  };
  const countsOf = (c: Record<WindowName, { count: number }>) => ({ minute: c.minute.count, day: c.day.count });

  const rateLimits: RateLimitStore = {
    async consume(who, bucket, limits, now) {
      if (who.version !== null && who.version !== version) return 'stale';
      const c = windows(who.keyId, bucket, now);
      const decision = decide(limits, countsOf(c), now, true);
      if (decision.allowed) for (const w of WINDOWS) c[w].count += 1;
      return decision;
    },
    async peek(who, bucket, limits, now) {
      return decide(limits, countsOf(windows(who.keyId, bucket, now)), now, false);
    },
  };

  return {
    accounts: accountStore,
    jobs: jobStore,
    files: fileStore,
    outbox,
    rateLimits,
    activeJobs: () =>
      [...jobs.values()]
        .filter((j) => j.status === 'queued' || j.status === 'processing')
        .sort((a, b) => a.queuedAt - b.queuedAt)
        .map(jobOf),
    async ping() {
      if (closed) throw new Error('the memory store is closed');
    },
    async close() {
      closed = true;
    },
  };
}
