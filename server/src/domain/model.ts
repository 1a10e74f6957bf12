// The domain's own records. Plain data: no Koa, no SQL. Times are epoch milliseconds;
// serializers turn them into the contract's ISO strings.

export type JobKind = 'avatar' | 'avatar_video';
export type JobStatus = 'queued' | 'processing' | 'ready' | 'failed';
export type KeyMode = 'sandbox' | 'live';

export interface JobError {
  code: string;
  message: string;
}

export interface AvatarInput {
  type: 'prompt' | 'photo' | 'props';
  name: string;
  prompt?: string;
  file?: { type: 'url'; url: string };
  ethnicity?: string;
  sex?: string;
  age?: number;
}

export interface VideoInput {
  avatar_id: string;
  script: string;
  aspect_ratio: '9:16' | '16:9' | '1:1';
}

export interface JobResult {
  /** Seconds of video, for avatar videos. */
  duration_seconds?: number;
}

export interface Job {
  id: string;
  kind: JobKind;
  accountId: string;
  keyId: string;
  /** Sandbox keys run on the built-in engine and honour the failure marker. */
  sandbox: boolean;
  status: JobStatus;
  input: AvatarInput | VideoInput;
  webhookUrl: string | null;
  credits: number;
  /** The credit period ("2026-11") the reservation belongs to. */
  period: string;
  error: JobError | null;
  result: JobResult | null;
  createdAt: number;
  updatedAt: number;
  completedAt: number | null;
  attempts: number;
}

export interface WindowLimits {
  /** Requests per UTC minute. */
  minute: number;
  /** Requests per UTC day. */
  day: number;
}

export interface RatePlan {
  read: WindowLimits;
  generation: WindowLimits;
}

export interface Account {
  id: string;
  name: string;
  monthlyCredits: number;
  plan: RatePlan;
  signingSecret: string;
  createdAt: number;
  /**
   * How far the account's sandbox clock is ahead of the service's clock, in ms (never
   * negative, never decreasing). The account's time is the service's time plus this.
   */
  clockOffsetMs: number;
  /**
   * The owner account this account is a workspace of, or null for an owner account
   * (source 1.5, 5.2). A workspace has its own keys, credits, limits and signing secret:
   * its jobs are charged to it, never to its owner.
   */
  ownerId: string | null;
  /**
   * Whether its webhooks also carry the Standard Webhooks headers (webhook-id,
   * webhook-timestamp, webhook-signature) beside X-Service-* (ND-STANDARD-WEBHOOKS).
   * Off until an operator turns it on.
   */
  standardWebhooks: boolean;
}

export interface ApiKey {
  id: string;
  accountId: string;
  mode: KeyMode;
  prefix: string;
  createdAt: number;
  revokedAt: number | null;
}

export interface CreditBalance {
  period: string;
  /** At most MAX_CREDITS (credits.ts): a store holding more is read as the bound, with `held`. */
  quota: number;
  used: number;
  reserved: number;
  available: number;
  /** The quota as the store holds it, when that is out of the bound (readCredits): for the report that names the account. */
  held?: string;
}

export type Bucket = keyof RatePlan;
/** Every bucket the limiter counts: the plan's two, and the sandbox clock's own. */
export type LimitedBucket = Bucket | 'sandbox';
export type WindowName = keyof WindowLimits;

export interface WindowState {
  window: WindowName;
  limit: number;
  remaining: number;
  /** Milliseconds until the window starts again. */
  resetMs: number;
}

export interface RateDecision {
  allowed: boolean;
  /** Every window of the bucket, after this request was counted (or refused). */
  windows: WindowState[];
}

/** A webhook event in the outbox: what to send, where, and how its attempts went. */
export interface OutboxEvent {
  id: string;
  type: string;
  jobId: string;
  accountId: string;
  url: string;
  /** Host and port of `url`: deliveries are shared fairly between destinations. */
  destination: string;
  /** The exact body to send, serialized once when the state changed. */
  payload: string;
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  nextAttemptAt: number;
  lastError: string | null;
  createdAt: number;
  /** When a receiver last took it, on the account's time. */
  deliveredAt: number | null;
  /**
   * The attempt due was asked for by the account (ND-WEBHOOK-LOG): it is logged as a
   * replay and ends the event, delivered or failed, with no retry after it.
   */
  replay: boolean;
}

/**
 * An event leased for an attempt, with what signing it needs from its account, read in
 * the same step as the claim; `sender` is null once the account no longer exists.
 */
export interface ClaimedEvent extends OutboxEvent {
  sender: Pick<Account, 'signingSecret' | 'clockOffsetMs' | 'standardWebhooks'> | null;
}

/** Why an attempt was made: the schedule (the first attempt and its retries), or a replay asked for. */
export type AttemptTrigger = 'scheduled' | 'replay';

/**
 * One delivery attempt as the delivery log keeps it (ND-WEBHOOK-LOG), recorded with the
 * outcome it led to. Never the secret nor the signature sent.
 */
export interface AttemptLog {
  trigger: AttemptTrigger;
  /** On the account's time, as every time the account reads. */
  startedAt: number;
  durationMs: number;
  /** The receiver's answer, or null when none came. */
  statusCode: number | null;
  /** Why it failed; null when it succeeded. */
  error: string | null;
  /** Whether the Standard Webhooks headers went with X-Service-* (ND-STANDARD-WEBHOOKS); absent is false. */
  standardWebhooks?: boolean;
}

/** An attempt of the log, read back with its event and its place among the event's attempts (1-based). */
export interface LoggedAttempt extends AttemptLog {
  eventId: string;
  number: number;
}
