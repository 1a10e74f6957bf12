// The ports the domain needs from a store. The domain owns them; each adapter under
// storage/ (embedded SQLite, PostgreSQL with Redis) implements them and depends on the
// domain alone. Every method that changes more than one thing is atomic inside the adapter: that
// is where "nothing lost, nothing spent twice" is decided, not in the callers.
import type {
  Account,
  ApiKey,
  AttemptLog,
  Bucket,
  ClaimedEvent,
  CreditBalance,
  Job,
  JobError,
  JobKind,
  JobResult,
  JobStatus,
  LimitedBucket,
  LoggedAttempt,
  RateDecision,
  RatePlan,
  OutboxEvent,
  WindowLimits,
} from './model.ts';
import type { DeliveryFairness, DestinationHealth } from './webhookDestinations.ts';

/**
 * Thrown by an adapter when its engine cannot be reached (connection refused, timed
 * out, shutting down). The HTTP layer answers 503 with Retry-After; workers wait and
 * try again. Never thrown for a query the engine refused on its merits.
 */
export class StoreUnavailableError extends Error {
  override name = 'StoreUnavailableError';
}

/**
 * What a log line keeps of an error: the store being out of reach, which is expected
 * and retried, by its type and message alone (its stack would only alarm, on every poll
 * of an outage); any other error whole, stack included, since nobody foresaw it.
 */
export function errorForLog(error: unknown): unknown {
  return error instanceof StoreUnavailableError ? { type: error.name, message: error.message } : error;
}

export type NewAccount = Omit<Account, 'clockOffsetMs' | 'standardWebhooks'>;

/**
 * A change of an account's credits: made; refused for an account that does not exist; or
 * refused, writing nothing, because a month would then hold more than MAX_CREDITS
 * (credits.ts): `period`, whose monthly credits and grants stood at `monthly` and `granted`.
 */
export type CreditsChanged =
  | { ok: true }
  | { ok: false; reason: 'not_found' }
  | { ok: false; reason: 'beyond_bound'; period: string; monthly: number; granted: number };

/** Why a workspace was not created: its owner is missing, or is itself a workspace (workspaces hold no workspaces). */
export type WorkspaceRefused = 'owner_not_found' | 'owner_is_workspace';

/** How an account's sandbox clock moves: forward by `byMs`, or up to an offset (never back). */
export type ClockMove = { byMs: number } | { toOffsetMs: number };

/**
 * The clock's offset after a move and how far it moved (0 when the offset asked for was
 * already passed). Refused for an account that has a live key (its time is real time),
 * and, moving nothing, when the offset would pass the cap (`offsetMs` is the offset as it stands).
 */
export type ClockMoved =
  | { ok: true; offsetMs: number; movedMs: number }
  | { ok: false; reason: 'not_found' | 'live_key' }
  | { ok: false; reason: 'offset_limit'; offsetMs: number };

export interface NewApiKey {
  id: string;
  accountId: string;
  mode: ApiKey['mode'];
  prefix: string;
  /** SHA-256 of the key; the key itself is never stored. */
  hash: string;
  createdAt: number;
}

/**
 * A key and its account as the store held them at `version`. Every change to the account
 * or to its keys moves the version on (in every process that serves the store), so a
 * record kept between requests is checked against it when the request is counted.
 */
export interface KeyRecord {
  key: ApiKey;
  account: Account;
  version: number;
}

export interface AccountStore {
  /**
   * Creates the account: an owner account when `ownerId` is null, else a workspace of that
   * owner, checked in the same step (the owner exists and is an owner account), or nothing
   * and the reason.
   */
  createAccount(account: NewAccount): Promise<{ ok: true } | { ok: false; reason: WorkspaceRefused }>;
  getAccount(id: string): Promise<Account | null>;
  /** Every account, owners and workspaces, oldest first. */
  listAccounts(): Promise<Account[]>;
  /** The workspaces of an owner account, oldest first (none for an unknown ID or a workspace). */
  listWorkspaces(ownerId: string): Promise<Account[]>;
  countAccounts(): Promise<number>;
  /** False, creating nothing, for a live key of an account whose sandbox clock has moved. */
  createKey(key: NewApiKey): Promise<boolean>;
  /** The live (not revoked) key with this hash, and its account. */
  findKeyByHash(hash: string): Promise<KeyRecord | null>;
  revokeKey(keyId: string, at: number): Promise<boolean>;
  setPlan(accountId: string, plan: RatePlan): Promise<boolean>;
  /** Refused, writing nothing, when a month with grants would then hold more than MAX_CREDITS. */
  setMonthlyCredits(accountId: string, credits: number): Promise<CreditsChanged>;
  /** Adds to the account's grants of `period`; refused, writing nothing, when the month would then hold more than MAX_CREDITS. */
  grantCredits(accountId: string, period: string, credits: number): Promise<CreditsChanged>;
  setSigningSecret(accountId: string, secret: string): Promise<boolean>;
  /** Turns the Standard Webhooks headers on or off for the account's deliveries (ND-STANDARD-WEBHOOKS). */
  setStandardWebhooks(accountId: string, on: boolean): Promise<boolean>;
  /**
   * Moves the account's sandbox clock forward and, in the same transaction, brings the
   * due times of its pending webhook events that are not in flight closer by as much, so
   * a retry the move passes is due at once. An event in flight is left alone (its row is
   * the sender's until it records the attempt); its retry takes the move into account
   * when it is recorded (RetryAt). A move that would take the offset past `maxOffsetMs`
   * is refused and moves nothing, checked against the offset the move starts from.
   */
  advanceClock(accountId: string, move: ClockMove, maxOffsetMs: number): Promise<ClockMoved>;
}

/** A create with an idempotency key: the key, what the request was, and its answer should it create the job. */
export interface IdempotencyClaim {
  key: string;
  fingerprint: string;
  /** The 202 body, as JSON text, that a replay answers. */
  response: string;
  expiresAt: number;
}

/** A page of an account's jobs, after a place in the newest-first order. */
export interface JobListQuery {
  accountId: string;
  kind: JobKind;
  limit: number;
  after?: { createdAt: number; id: string };
  status?: JobStatus;
  avatarId?: string;
}

/** A key that created a job and is still kept. */
export interface IdempotentRequest {
  key: string;
  fingerprint: string;
  jobId: string;
  response: string;
  createdAt: number;
  expiresAt: number;
}

export type ReserveOutcome =
  | { ok: true; job: Job }
  | { ok: false; balance: CreditBalance }
  /** The claim's key is kept already, for the request it describes: nothing was created. */
  | { ok: false; kept: IdempotentRequest };

export interface Completion {
  status: 'ready' | 'failed';
  error: JobError | null;
  result: JobResult | null;
  at: number;
}

export interface JobStore {
  /**
   * Creates the job and reserves its credits in one step, or creates nothing when the
   * account's available credits for the job's period do not cover `job.credits`
   * (CR-RESERVE, CR-402-NO-JOB). Atomic against concurrent calls. `queuedAt` is the
   * service's time of the create, the queue's order: the job's own times are its
   * account's, and accounts' clocks differ.
   */
  createJobReservingCredits(job: Job, queuedAt: number, idempotency?: IdempotencyClaim): Promise<ReserveOutcome>;
  /**
   * The idempotency key of the account that is kept at `now` (it has not expired), or
   * null. With a claim, createJobReservingCredits stores the key with the job, in the same
   * transaction, or creates nothing and answers the key already kept; so two requests with
   * one key never both create a job, whichever process serves them.
   */
  findIdempotentRequest(accountId: string, key: string, now: number): Promise<IdempotentRequest | null>;
  /**
   * The account's jobs of one kind, newest first (created_at, then id, both descending),
   * starting after `after` when given: at most `limit`. Filters by status, and for videos
   * by avatar.
   */
  listJobs(query: JobListQuery): Promise<Job[]>;
  getJob(id: string): Promise<Job | null>;
  /**
   * Hands the runnable job queued first on the service's time to one worker: a queued
   * job, or a processing job whose lease expired (its worker died). Sets it `processing`
   * (its `updated_at` the account's time: `now` plus the account's clock offset), counts
   * the attempt and leases it to `workerId` until `leaseUntil`. `now` and the lease are
   * the service's time.
   * Videos of the accounts in `skipVideosOf` are passed over (the worker renders one of
   * theirs already), so that another account's video is taken in their stead.
   */
  claimJob(workerId: string, now: number, leaseUntil: number, skipVideosOf?: readonly string[]): Promise<Job | null>;
  /**
   * Up to `limit` jobs claimed at once, each as claimJob would, in the order they were
   * queued, and at most one video of an account (none of the accounts in `skipVideosOf`):
   * the jobs claimJob would hand out one after another, each video's account skipped
   * from then on. Never more than `limit`; fewer when fewer are runnable, and a store may
   * look at only the first `limit` runnable jobs (a second video of an account among them
   * is then left for the next claim): a worker with slots still free claims again.
   */
  claimJobs(workerId: string, now: number, leaseUntil: number, limit: number, skipVideosOf?: readonly string[]): Promise<Job[]>;
  /** Extends the lease of a job this worker still holds; false when it lost it. */
  renewLease(jobId: string, workerId: string, leaseUntil: number): Promise<boolean>;
  /** Gives a leased job back to the queue (graceful shutdown). */
  releaseLease(jobId: string, workerId: string, now: number): Promise<void>;
  /**
   * Moves a non-terminal job to `ready` (capturing its credits) or `failed`
   * (releasing them), and records its webhook event if any, all in one transaction.
   * Returns false, changing nothing, when the job is already terminal (ST-TERMINAL),
   * so a job can never be charged twice.
   */
  completeJob(jobId: string, completion: Completion, event: OutboxEvent | null): Promise<boolean>;
  /** Jobs waiting for a worker or being worked on. */
  countActiveJobs(): Promise<{ queued: number; processing: number }>;
  creditBalance(accountId: string, period: string): Promise<CreditBalance>;
}

/** An event its receiver took, on its `attempts`th attempt, at `at` (the account's time), and that attempt for the log. */
export interface Delivered {
  eventId: string;
  at: number;
  attempts: number;
  attempt: AttemptLog;
}

/** A page of an account's webhook events, after a place in the newest-first order. */
export interface WebhookEventQuery {
  accountId: string;
  limit: number;
  after?: { createdAt: number; id: string };
  jobId?: string;
  status?: OutboxEvent['status'];
}

/** What a replay asked for found: the event now pending, or why nothing was scheduled. */
export type ReplayOutcome = { ok: true; event: OutboxEvent } | { ok: false; reason: 'not_found' } | { ok: false; reason: 'pending'; event: OutboxEvent };

/**
 * When to try an event again: `at` on the service's time, for the account's sandbox clock
 * as it stood when the failed attempt began (`clockOffsetMs`). A move of the clock made
 * while the attempt was in flight brings `at` closer by as much, as advanceClock does for
 * the events at rest, so no move is lost to an attempt that was under way.
 */
export interface RetryAt {
  at: number;
  clockOffsetMs: number;
}

export interface WebhookOutbox {
  /**
   * Pending events due at `now`, oldest first, leased so that only one sender takes each,
   * and never more per destination than `fairness` allows counting the attempts already
   * in flight on every sender (atomic against concurrent claims).
   */
  claimDueEvents(now: number, limit: number, leaseUntil: number, fairness: DeliveryFairness): Promise<ClaimedEvent[]>;
  /**
   * Records the deliveries and their attempts in the log, in one step, and clears their
   * destinations' failures in a row.
   */
  markDelivered(deliveries: Delivered[]): Promise<void>;
  /**
   * Records a failed attempt (in the log too, in the same transaction), and what it says
   * of its destination: `down` counts one more failure in a row, `up` clears them,
   * `unknown` leaves them. Returns the destination's failures in a row afterwards.
   */
  scheduleRetry(eventId: string, attempts: number, retry: RetryAt, attempt: AttemptLog, health: DestinationHealth): Promise<number>;
  /** Records the last failed attempt, as scheduleRetry does; the destination's failures are forgotten once it has nothing pending. */
  markFailed(eventId: string, attempts: number, attempt: AttemptLog, health: DestinationHealth): Promise<number>;
  getEvent(eventId: string): Promise<OutboxEvent | null>;
  /** The account's events, newest first (created_at, then id, both descending), after `after` when given: at most `limit`. */
  listEvents(query: WebhookEventQuery): Promise<OutboxEvent[]>;
  /** The logged attempts of these events, each event's in the order they were made. */
  attemptsOf(eventIds: readonly string[]): Promise<LoggedAttempt[]>;
  /**
   * Makes a delivered or failed event of the account pending, due at `now` (the service's
   * time), as a replay: one attempt, then no retry. Atomic: of concurrent replays of one
   * event, one finds it at rest and the others find it pending.
   */
  requestReplay(accountId: string, eventId: string, now: number): Promise<ReplayOutcome>;
  /**
   * When the earliest pending event that is not due yet at `now` becomes due (a retry
   * scheduled for later), so a sender can wake then. Events already due are the claim's
   * business: a sender claims again when an attempt settles and on every poll.
   */
  nextDueAfter(now: number): Promise<number | null>;
  countPending(): Promise<number>;
}

/** Whose request is counted: the key, its account, and the account's version its limits were read at. */
export interface CountedKey {
  keyId: string;
  accountId: string;
  /** Null for a record read for this very request: it is counted without a check. */
  version: number | null;
}

export interface RateLimitStore {
  /**
   * Counts one request against every window of `bucket` for the key, or against none
   * when any window is full (a refused request uses up no other window). `stale`,
   * counting nothing, when the account has changed since `who.version` (a version is
   * given): the caller reads the key again (it may be revoked, or its limits may have
   * changed).
   */
  consume(who: CountedKey, bucket: LimitedBucket, limits: WindowLimits, now: number): Promise<RateDecision | 'stale'>;
  /** The windows as they stand, without counting a request. */
  peek(who: Omit<CountedKey, 'version'>, bucket: LimitedBucket, limits: WindowLimits, now: number): Promise<RateDecision>;
}

/** A file a job made, as its store keeps it: read in byte ranges, never whole unless asked. */
export interface StoredFile {
  contentType: string;
  size: number;
  /** The bytes [start, end] (end included), in pieces of a bounded size. */
  read(start: number, end: number): AsyncIterable<Uint8Array>;
}

/**
 * The files jobs make (a video's MP4), kept where every process of the deployment reads
 * them: the worker that made one is seldom the API process that serves it.
 */
export interface FileStore {
  /**
   * Keeps `body` as the file `name` of job `jobId`, replacing one kept before (a job run
   * again after its worker died makes its file again). The file is there, whole, for
   * every reader once this resolves, and a reader never sees part of one.
   */
  putFile(jobId: string, name: string, contentType: string, body: AsyncIterable<Uint8Array>): Promise<void>;
  getFile(jobId: string, name: string): Promise<StoredFile | null>;
  /**
   * The key that signs file links (ND-FILE-LINKS) where the operator sets none: the one
   * the store keeps, or else `candidate`, kept now. Of processes that start together, the
   * first to keep one wins and every one gets that one, so each verifies what another
   * signed, and links outlive a restart.
   */
  linkKey(candidate: string): Promise<string>;
  /**
   * Up to `limit` ready videos of the store as it was before jobs kept their files, listed
   * by the upgrade's migration, whose MP4 may have to be made again (restoreFiles.ts).
   */
  filesToRestore(limit: number): Promise<string[]>;
  /** Takes a video off that list: its file is kept, or it needs none. */
  fileRestored(jobId: string): Promise<void>;
}

export interface Store {
  accounts: AccountStore;
  jobs: JobStore;
  files: FileStore;
  outbox: WebhookOutbox;
  rateLimits: RateLimitStore;
  /** Throws when the store cannot be reached. */
  ping(): Promise<void>;
  close(): Promise<void>;
}
