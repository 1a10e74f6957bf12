// Reads the contract's numbers from a bundle given to it: each rate-limit bucket's
// windows, each create's price, the default plan's credits, the webhook delivery's
// timeout and retry schedule, the file links' lifetime, and every problem code with its status and title. It
// loads nothing itself, so `npm run generate` can read the bundle it is making while
// the committed one is stale; everything else reads them, loaded once, from numbers.ts.
import type { JsonObject } from './schemas.ts';

/** One window of a bucket: `limit` requests per `windowSeconds`, named as GET /v1/me shows it. */
export interface RateLimitWindow {
  name: string;
  limit: number;
  windowSeconds: number;
}

/** Each bucket's windows, shortest first: `x-rate-limit-buckets` of the document's info. */
export type RateLimitBuckets = Readonly<Record<string, readonly RateLimitWindow[]>>;

/** How the service delivers a webhook: `x-webhook-delivery` of the document's info. */
export interface WebhookDelivery {
  /** The longest an attempt waits for an answer. */
  timeoutSeconds: number;
  /** The nominal wait before each retry, in order; its length is the number of retries. */
  retryDelaysSeconds: readonly number[];
  /** Each wait is scaled by a random factor in [1 - jitter, 1 + jitter]. */
  jitter: number;
  /** Attempts in all: the first and one per retry. */
  attempts: number;
}

/** How file links expire: `x-file-links` of the document's info (ND-FILE-LINKS). */
export interface FileLinks {
  /** How long a link given by a read of a record or a webhook stays valid, on the account's time. */
  lifetimeSeconds: number;
  /** Until when (ms since the epoch, the service's time) a link without `expires` and `signature` is still served. */
  unsignedUntilMs: number;
}

/** The kinds of job a create makes, as their records' `object` names them. */
export type CreateKind = 'avatar' | 'avatar_video';

/** The operation that creates each kind, whose `x-credit-cost` is its price. */
export const CREATE_OPERATIONS: Readonly<Record<CreateKind, string>> = { avatar: 'createAvatar', avatar_video: 'createAvatarVideo' };

/** A problem code's status and title (`x-problem-codes` of the Problem schema's `code`). */
export interface ProblemCode {
  status: number;
  title: string;
}

/** The contract's numbers cannot be read: the message names the member and the rule. */
export class ContractNumberError extends Error {
  override name = 'ContractNumberError';
}

function object(value: unknown, where: string): JsonObject {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new ContractNumberError(`${where} must be an object`);
  return value as JsonObject;
}

function positiveInteger(value: unknown, where: string): number {
  if (!Number.isInteger(value) || (value as number) <= 0) throw new ContractNumberError(`${where} must be a positive integer, not ${JSON.stringify(value)}`);
  return value as number;
}

function info(bundle: JsonObject): JsonObject {
  return object(bundle.info, 'the contract\'s info');
}

/** Each bucket's windows and limits (`info.x-rate-limit-buckets`). */
export function rateLimitBuckets(bundle: JsonObject): RateLimitBuckets {
  const where = 'info.x-rate-limit-buckets';
  const stated = object(info(bundle)['x-rate-limit-buckets'], where);
  const buckets: Record<string, RateLimitWindow[]> = {};
  for (const [bucket, windows] of Object.entries(stated)) {
    if (!Array.isArray(windows) || windows.length === 0) throw new ContractNumberError(`${where}.${bucket} must be a non-empty list of windows`);
    buckets[bucket] = windows.map((window, i) => {
      const at = `${where}.${bucket}[${i}]`;
      const w = object(window, at);
      if (typeof w.name !== 'string' || w.name === '') throw new ContractNumberError(`${at}.name must be a non-empty string`);
      return { name: w.name, limit: positiveInteger(w.limit, `${at}.limit`), windowSeconds: positiveInteger(w.window_seconds, `${at}.window_seconds`) };
    });
  }
  return buckets;
}

/** The price in credits of each kind of job (`x-credit-cost` on its create operation). */
export function creditCosts(bundle: JsonObject): Readonly<Record<CreateKind, number>> {
  const byOperation = new Map<string, unknown>();
  for (const item of Object.values((bundle.paths ?? {}) as Record<string, Record<string, JsonObject>>)) {
    for (const operation of Object.values(item)) {
      if (typeof operation?.operationId === 'string') byOperation.set(operation.operationId, operation['x-credit-cost']);
    }
  }
  const price = (kind: CreateKind) => positiveInteger(byOperation.get(CREATE_OPERATIONS[kind]), `x-credit-cost of ${CREATE_OPERATIONS[kind]}`);
  return { avatar: price('avatar'), avatar_video: price('avatar_video') };
}

/** The webhook delivery's timeout, retry schedule and jitter (`info.x-webhook-delivery`). */
export function webhookDelivery(bundle: JsonObject): WebhookDelivery {
  const where = 'info.x-webhook-delivery';
  const stated = object(info(bundle)['x-webhook-delivery'], where);
  const delays = stated.retry_delays_seconds;
  if (!Array.isArray(delays)) throw new ContractNumberError(`${where}.retry_delays_seconds must be a list of seconds`);
  const jitter = stated.jitter;
  if (typeof jitter !== 'number' || jitter < 0 || jitter >= 1) throw new ContractNumberError(`${where}.jitter must be a number from 0 up to (not including) 1, not ${JSON.stringify(jitter)}`);
  const retryDelaysSeconds = delays.map((d, i) => positiveInteger(d, `${where}.retry_delays_seconds[${i}]`));
  return { timeoutSeconds: positiveInteger(stated.timeout_seconds, `${where}.timeout_seconds`), retryDelaysSeconds, jitter, attempts: retryDelaysSeconds.length + 1 };
}

/** The file links' lifetime and the end of the unsigned links' grace (`info.x-file-links`). */
export function fileLinks(bundle: JsonObject): FileLinks {
  const where = 'info.x-file-links';
  const stated = object(info(bundle)['x-file-links'], where);
  const until = stated.unsigned_until;
  const unsignedUntilMs = typeof until === 'string' ? Date.parse(until) : Number.NaN;
  if (Number.isNaN(unsignedUntilMs)) throw new ContractNumberError(`${where}.unsigned_until must be an RFC 3339 date-time, not ${JSON.stringify(until)}`);
  return { lifetimeSeconds: positiveInteger(stated.lifetime_seconds, `${where}.lifetime_seconds`), unsignedUntilMs };
}

/** The credits a month of an account's default plan (`info.x-monthly-credits`). */
export function monthlyCredits(bundle: JsonObject): number {
  return positiveInteger(info(bundle)['x-monthly-credits'], 'info.x-monthly-credits');
}

/** Every problem code with its status and title (`x-problem-codes` of the Problem schema's `code`). */
export function problemCodes(bundle: JsonObject): Readonly<Record<string, ProblemCode>> {
  const where = 'components.schemas.Problem.properties.code.x-problem-codes';
  const schemas = object(object(bundle.components, 'components').schemas, 'components.schemas');
  const code = object(object(object(schemas.Problem, 'components.schemas.Problem').properties, 'Problem.properties').code, 'Problem.properties.code');
  const table = object(code['x-problem-codes'], where);
  const codes: Record<string, ProblemCode> = {};
  for (const [name, row] of Object.entries(table)) {
    const r = object(row, `${where}.${name}`);
    const status = positiveInteger(r.status, `${where}.${name}.status`);
    if (status < 400 || status > 599) throw new ContractNumberError(`${where}.${name}.status must be from 400 to 599, not ${status}`);
    if (typeof r.title !== 'string' || r.title === '') throw new ContractNumberError(`${where}.${name}.title must be a non-empty string`);
    codes[name] = { status, title: r.title };
  }
  return codes;
}

/** A bucket's windows; throws naming the bucket when the contract has none of that name. */
export function bucketWindowsOf(buckets: RateLimitBuckets, bucket: string): readonly RateLimitWindow[] {
  const windows = buckets[bucket];
  if (!windows) throw new ContractNumberError(`the contract states no rate-limit bucket ${bucket} (info.x-rate-limit-buckets)`);
  return windows;
}

/** A number as the docs write it: thousands separated by commas (10,000). */
export function formatNumber(n: number): string {
  return n.toLocaleString('en-US');
}

/** A bucket's limits as the texts write them: "120/minute and 10,000/day". */
export function bucketLimitsTextOf(buckets: RateLimitBuckets, bucket: string): string {
  return bucketWindowsOf(buckets, bucket).map((w) => `${formatNumber(w.limit)}/${w.name}`).join(' and ');
}
