// The typed client for the Avatar Service API: openapi-fetch over the generated types,
// bearer authentication (ND-AUTH-PRESENTATION), waiting out 429s (RL-CLIENT-WAIT) and
// polling jobs with backoff (RL-CLIENT-BACKOFF). It knows nothing of the server's code:
// only the contract.
import createClient, { type Client } from 'openapi-fetch';
import type { components, paths } from '../../generated/openapi.ts';

export * from '../../contract/webhookSignature.ts';
export * from './verify.ts';
export * from './rateLimit.ts';
export * from '../../contract/rateLimitFields.ts';
// Not the Koa receiver (./receiver.ts, the package's `/receiver` entry): its types name
// Koa's, and a user of the client alone has no reason to install them.

type Schemas = components['schemas'];
export type Avatar = Schemas['Avatar'];
export type AvatarVideo = Schemas['AvatarVideo'];
export type AvatarCreateRequest = Schemas['AvatarCreateRequest'];
export type AvatarVideoCreateRequest = Schemas['AvatarVideoCreateRequest'];
export type Account = Schemas['Account'];
export type Problem = Schemas['Problem'];
export type JobStatus = Schemas['JobStatus'];
export type SandboxClock = Schemas['SandboxClock'];
export type WebhookEventRecord = Schemas['WebhookEvent'];
export type WebhookAttempt = Schemas['WebhookAttempt'];
export type { components, paths };

export type JobKind = 'avatar' | 'avatar_video';

/** The calendar boundaries a sandbox test usually wants to cross: the rate-limit windows and the credit period. */
export type ClockBoundary = 'minute' | 'day' | 'month';

/** The first instant (UTC) of the next minute, day or month after `now`. */
export function nextBoundary(now: number, boundary: ClockBoundary): number {
  const d = new Date(now);
  if (boundary === 'month') return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
  const unit = boundary === 'day' ? 86_400_000 : 60_000;
  return Math.floor(now / unit) * unit + unit;
}
export const TERMINAL_STATUSES: readonly string[] = ['ready', 'failed'];

/** The statuses worth waiting for a 429 or 503 to clear: both carry Retry-After. */
const RETRYABLE_STATUSES = new Set([429, 503]);

export interface RetryOptions {
  /** Attempts in all, the first included. 1 turns retrying off. Default 4. */
  maxAttempts?: number;
  /**
   * The caller's bound: the most seconds one call may spend waiting for limits to
   * clear, all retries together. A Retry-After beyond what is left of it is not waited
   * for; the 429 is returned instead. Default 120.
   */
  maxWaitSeconds?: number;
}

export interface AvatarClientOptions {
  /** Scheme, host and port, without /v1 (e.g. http://localhost:3000). */
  baseUrl: string;
  apiKey: string;
  /** Retrying 429 and 503 after Retry-After; `false` returns them at once. */
  retry?: RetryOptions | false;
  fetch?: (request: Request) => Promise<Response>;
  /** Injectable for tests: how to wait, what time it is, and the jitter source. */
  sleep?: (ms: number) => Promise<void>;
  now?: () => number;
  random?: () => number;
  /** Extra headers on every request, e.g. X-Request-Id. */
  headers?: Record<string, string>;
}

export interface WaitOptions {
  /** Give up after this long, counted from the call. Default 10 minutes. */
  deadlineMs?: number;
  /** The first wait between polls. Default 1 s. */
  initialDelayMs?: number;
  /** The longest wait between polls. Default 30 s. */
  maxDelayMs?: number;
  /** Growth of the wait after each poll. Default 2. */
  factor?: number;
  /** Called with each record polled, e.g. to log progress. */
  onPoll?: (record: Avatar | AvatarVideo, response: Response) => void;
}

/** A job did not reach `ready` or `failed` before the caller's deadline. */
export class WaitTimeoutError extends Error {
  readonly last: Avatar | AvatarVideo | undefined;
  constructor(message: string, last: Avatar | AvatarVideo | undefined) {
    super(message);
    this.name = 'WaitTimeoutError';
    this.last = last;
  }
}

/** Polling met an answer other than the record (a 404, a 401, a 5xx after retries). */
export class ApiError extends Error {
  readonly status: number;
  readonly problem: Problem | undefined;
  constructor(status: number, problem: Problem | undefined, message: string) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.problem = problem;
  }
}

/**
 * Seconds to wait according to Retry-After (delta-seconds or an HTTP date, RFC 9110
 * §10.2.3), falling back to RateLimit-Reset; undefined when neither is usable.
 */
export function retryAfterSeconds(headers: Headers, nowMs: number = Date.now()): number | undefined {
  const retryAfter = headers.get('retry-after')?.trim();
  if (retryAfter) {
    if (/^\d+$/.test(retryAfter)) return Number(retryAfter);
    const date = Date.parse(retryAfter);
    if (!Number.isNaN(date)) return Math.max(0, Math.ceil((date - nowMs) / 1000));
  }
  const reset = headers.get('ratelimit-reset')?.trim();
  if (reset && /^\d+$/.test(reset)) return Number(reset);
  return undefined;
}

/** A paid create's options: the idempotency key to send (default: a new UUID per call). */
export interface CreateOptions {
  /**
   * Sent as Idempotency-Key, and the same on every retry of this call, so a retry never
   * creates or charges twice. Pass your own (an order ID, say) to make a retry of the
   * whole call, after a crash of your process, safe too.
   */
  idempotencyKey?: string;
}

/** Seconds between attempts after a network failure, when no answer said how long: 1, 2, 4, ... */
const NETWORK_RETRY_BASE_SECONDS = 1;

/**
 * Wraps a fetch so that a 429 or 503 is retried only after the server's Retry-After
 * has passed (RL-CLIENT-WAIT), and only within the caller's bound. A request that got no
 * answer at all (the connection failed or dropped) is retried too, but only when it is
 * safe to send twice: a GET, or a create carrying an Idempotency-Key.
 */
export function fetchHonouringRetryAfter(
  baseFetch: (request: Request) => Promise<Response>,
  retry: Required<RetryOptions>,
  sleep: (ms: number) => Promise<void>,
  now: () => number,
): (request: Request) => Promise<Response> {
  return async (request) => {
    let waitedSeconds = 0;
    for (let attempt = 1; ; attempt++) {
      let response: Response;
      try {
        // A Request body can be read once; each attempt sends a copy.
        response = await baseFetch(request.clone());
      } catch (error) {
        const seconds = NETWORK_RETRY_BASE_SECONDS * 2 ** (attempt - 1);
        if (!safeToResend(request) || attempt >= retry.maxAttempts || waitedSeconds + seconds > retry.maxWaitSeconds) throw error;
        await sleep(seconds * 1000);
        waitedSeconds += seconds;
        continue;
      }
      if (!RETRYABLE_STATUSES.has(response.status) || attempt >= retry.maxAttempts) return response;
      // Without Retry-After or RateLimit-Reset, wait one second: never a tight loop.
      const seconds = retryAfterSeconds(response.headers, now()) ?? 1;
      if (waitedSeconds + seconds > retry.maxWaitSeconds) return response;
      await response.body?.cancel();
      await sleep(seconds * 1000);
      waitedSeconds += seconds;
    }
  };
}

function safeToResend(request: Request): boolean {
  return request.method === 'GET' || request.method === 'HEAD' || request.headers.has('idempotency-key');
}

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export type AvatarApi = Client<paths>;

/** One list page as openapi-fetch answers it. */
interface PageAnswer<T> {
  data?: { data: T[]; next_cursor: string | null };
  error?: unknown;
  response: Response;
}

/** The records of a list, page after page, following next_cursor until there is none. */
async function* everyRecord<T>(path: string, page: (cursor: string | undefined) => Promise<PageAnswer<T>>): AsyncGenerator<T> {
  let cursor: string | undefined;
  do {
    const answer = await page(cursor);
    if (!answer.data) throw new ApiError(answer.response.status, answer.error as Problem | undefined, `GET ${path} answered ${answer.response.status}`);
    yield* answer.data.data;
    cursor = answer.data.next_cursor ?? undefined;
  } while (cursor);
}
export type AvatarListQuery = NonNullable<paths['/v1/avatars']['get']['parameters']['query']>;
export type AvatarVideoListQuery = NonNullable<paths['/v1/avatar-videos']['get']['parameters']['query']>;
export type WebhookEventListQuery = NonNullable<paths['/v1/webhook-events']['get']['parameters']['query']>;

/** A new idempotency key: a random UUID (Web Crypto, in Node and browsers alike). */
export function newIdempotencyKey(): string {
  return globalThis.crypto.randomUUID();
}

export function createAvatarClient(options: AvatarClientOptions) {
  const sleep = options.sleep ?? defaultSleep;
  const now = options.now ?? Date.now;
  const random = options.random ?? Math.random;
  const baseFetch = options.fetch ?? ((request: Request) => globalThis.fetch(request));
  const fetch =
    options.retry === false
      ? baseFetch
      : fetchHonouringRetryAfter(
          baseFetch,
          { maxAttempts: options.retry?.maxAttempts ?? 4, maxWaitSeconds: options.retry?.maxWaitSeconds ?? 120 },
          sleep,
          now,
        );

  const api: AvatarApi = createClient<paths>({
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    fetch,
    headers: { ...options.headers, Authorization: `Bearer ${options.apiKey}` },
  });

  const client = {
    /** The underlying openapi-fetch client, typed for every path. */
    api,
    /** Sends an Idempotency-Key (a new UUID unless given), the same on each of its retries. */
    createAvatar: (body: AvatarCreateRequest, options: CreateOptions = {}) =>
      api.POST('/v1/avatars', { body, params: { header: { 'Idempotency-Key': options.idempotencyKey ?? newIdempotencyKey() } } }),
    getAvatar: (id: string) => api.GET('/v1/avatars/{id}', { params: { path: { id } } }),
    /** Sends an Idempotency-Key (a new UUID unless given), the same on each of its retries. */
    createAvatarVideo: (body: AvatarVideoCreateRequest, options: CreateOptions = {}) =>
      api.POST('/v1/avatar-videos', { body, params: { header: { 'Idempotency-Key': options.idempotencyKey ?? newIdempotencyKey() } } }),
    getAvatarVideo: (id: string) => api.GET('/v1/avatar-videos/{id}', { params: { path: { id } } }),
    /** One page of the account's avatars, newest first; pass `next_cursor` back as `cursor`. */
    listAvatars: (query: AvatarListQuery = {}) => api.GET('/v1/avatars', { params: { query } }),
    /** One page of the account's videos, newest first (all, or one avatar's). */
    listAvatarVideos: (query: AvatarVideoListQuery = {}) => api.GET('/v1/avatar-videos', { params: { query } }),
    eachAvatar,
    eachAvatarVideo,
    /** One page of the delivery log: the account's webhook events, newest first, each with its attempts. */
    listWebhookEvents: (query: WebhookEventListQuery = {}) => api.GET('/v1/webhook-events', { params: { query } }),
    /** One webhook event and every attempt to deliver it. */
    getWebhookEvent: (id: string) => api.GET('/v1/webhook-events/{id}', { params: { path: { id } } }),
    /**
     * Asks for one new delivery of a delivered or failed event: the same event ID, a fresh
     * timestamp and signature (202, the event pending). A pending event answers
     * 409 webhook_event_pending. Counted in the generation bucket; costs no credits.
     */
    replayWebhookEvent: (id: string) => api.POST('/v1/webhook-events/{id}/replay', { params: { path: { id } } }),
    eachWebhookEvent,
    getMe: () => api.GET('/v1/me'),
    /** Sandbox keys only: the account's time (a live key gets 404, as for an unknown route). */
    getSandboxClock: () => api.GET('/v1/test_helpers/clock'),
    /** Sandbox keys only: moves the account's time forward by `seconds`, or to `to`. */
    advanceSandboxClock: (move: { seconds: number } | { to: Date | string }) =>
      api.POST('/v1/test_helpers/clock/advance', {
        body: 'to' in move ? { to: typeof move.to === 'string' ? move.to : move.to.toISOString() } : { seconds: move.seconds },
      }),
    advanceSandboxClockPast,
    waitForTerminal,
  };

  /**
   * Every avatar of the account, newest first, fetching page after page as the loop asks
   * for them (`for await (const avatar of client.eachAvatar({ status: 'ready' }))`).
   * Stable while avatars are created: each one that existed when the first page was read
   * comes exactly once. Throws ApiError when a page is refused.
   */
  function eachAvatar(query: Omit<AvatarListQuery, 'cursor'> = {}): AsyncGenerator<Avatar> {
    return everyRecord('/v1/avatars', (cursor) => api.GET('/v1/avatars', { params: { query: { ...query, ...(cursor ? { cursor } : {}) } } }));
  }

  /** Every video of the account (or of one avatar), newest first, as eachAvatar. */
  function eachAvatarVideo(query: Omit<AvatarVideoListQuery, 'cursor'> = {}): AsyncGenerator<AvatarVideo> {
    return everyRecord('/v1/avatar-videos', (cursor) => api.GET('/v1/avatar-videos', { params: { query: { ...query, ...(cursor ? { cursor } : {}) } } }));
  }

  /** Every webhook event of the account (or of one job, or in one state), newest first, as eachAvatar. */
  function eachWebhookEvent(query: Omit<WebhookEventListQuery, 'cursor'> = {}): AsyncGenerator<WebhookEventRecord> {
    return everyRecord('/v1/webhook-events', (cursor) => api.GET('/v1/webhook-events', { params: { query: { ...query, ...(cursor ? { cursor } : {}) } } }));
  }

  /**
   * Moves the account's time to the first instant of its next UTC minute, day or month,
   * so a test sees a window or the credit period start again in one call. Returns the
   * clock after the move; throws ApiError when the service refuses.
   */
  async function advanceSandboxClockPast(boundary: ClockBoundary): Promise<SandboxClock> {
    const read = await client.getSandboxClock();
    if (!read.data) throw new ApiError(read.response.status, read.error as Problem | undefined, `GET /v1/test_helpers/clock answered ${read.response.status}`);
    const moved = await client.advanceSandboxClock({ to: new Date(nextBoundary(Date.parse(read.data.now), boundary)) });
    // The account's time flows: it may have crossed the boundary on its own since it was read.
    const passed = moved.response.status === 422 && (moved.error as Problem | undefined)?.errors?.some((e) => e.field === 'to' && e.rule === 'after_now');
    if (passed) {
      const now = await client.getSandboxClock();
      if (now.data) return now.data;
    }
    if (!moved.data) throw new ApiError(moved.response.status, moved.error as Problem | undefined, `POST /v1/test_helpers/clock/advance answered ${moved.response.status}`);
    return moved.data;
  }

  /**
   * Polls an avatar or avatar video until it is `ready` or `failed` and returns that
   * record (RL-CLIENT-BACKOFF). Waits grow by `factor` from `initialDelayMs` up to
   * `maxDelayMs`, each drawn from [half, all] of the current step ("equal jitter"), so
   * many clients started together spread out. Throws WaitTimeoutError at the deadline.
   */
  function waitForTerminal(kind: 'avatar', id: string, wait?: WaitOptions): Promise<Avatar>;
  function waitForTerminal(kind: 'avatar_video', id: string, wait?: WaitOptions): Promise<AvatarVideo>;
  function waitForTerminal(kind: JobKind, id: string, wait?: WaitOptions): Promise<Avatar | AvatarVideo>;
  async function waitForTerminal(kind: JobKind, id: string, wait: WaitOptions = {}): Promise<Avatar | AvatarVideo> {
    const deadline = now() + (wait.deadlineMs ?? 600_000);
    const maxDelay = wait.maxDelayMs ?? 30_000;
    const factor = wait.factor ?? 2;
    let step = Math.min(wait.initialDelayMs ?? 1000, maxDelay);
    let last: Avatar | AvatarVideo | undefined;
    for (;;) {
      const result = kind === 'avatar' ? await client.getAvatar(id) : await client.getAvatarVideo(id);
      if (result.data) {
        last = result.data;
        wait.onPoll?.(result.data, result.response);
        if (TERMINAL_STATUSES.includes(result.data.status)) return result.data;
      } else if (result.response.status < 500 && result.response.status !== 429) {
        const problem = result.error as Problem | undefined;
        throw new ApiError(
          result.response.status,
          problem,
          `GET ${kind === 'avatar' ? '/v1/avatars' : '/v1/avatar-videos'}/${id} answered ${result.response.status}${problem?.code ? ` ${problem.code}` : ''}`,
        );
      }
      // A 5xx or a 429 still there after the client's own retries: keep polling.
      const delay = step / 2 + random() * (step / 2);
      if (now() + delay > deadline) {
        throw new WaitTimeoutError(
          `${kind} ${id} is still ${last?.status ?? 'unknown'} at the deadline`,
          last,
        );
      }
      await sleep(delay);
      step = Math.min(step * factor, maxDelay);
    }
  }

  return client;
}

export type AvatarClient = ReturnType<typeof createAvatarClient>;
