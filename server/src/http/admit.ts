import { admit, type Admission } from '../domain/admission.ts';
import type { DomainDeps } from '../domain/deps.ts';
import type { LimitedBucket } from '../domain/model.ts';
import { WINDOW_MS, ceilSeconds } from '../domain/rateLimits.ts';
import { RATE_LIMIT_HEADER, RATE_LIMIT_POLICY_HEADER, formatRateLimit, formatRateLimitPolicy } from '../../../contract/rateLimitFields.ts';
import { noSuchRoute } from './errors.ts';
import type { AppContext, Middleware } from './state.ts';

/** RFC 9110 §11.1: the scheme name is case-insensitive ("bearer", "BEARER"). */
const BEARER = /^Bearer +([A-Za-z0-9_\-]{8,200})\s*$/i;

/** The key a request presents (AUTH-KEY, ND-AUTH-PRESENTATION), or null. */
export const presentedKey = (authorization: string): string | null => BEARER.exec(authorization)?.[1] ?? null;

/**
 * Steps 1 and 2 of every /v1 request: the caller is admitted for the operation's bucket.
 * The headers of the shown window go on every answer from here on, success or error,
 * with their X- twins (RL-HEADERS, RL-HEADERS-COMPAT), and the same figures in the IETF
 * draft's structured fields, RateLimit-Policy and RateLimit (ND-RATELIMIT-FIELDS);
 * Retry-After only on the 429 (RL-RETRY-AFTER-ONLY-429).
 */
export function admitted(domain: DomainDeps, bucket: LimitedBucket): Middleware {
  return async (ctx, next) => {
    enter(ctx, await admit(domain, presentedKey(ctx.get('Authorization')), bucket));
    await next();
  };
}

/**
 * Admits a read as `admitted` does, with the record read alongside the count instead of
 * after it (or after it, for a key refused until its window reopens), and returns what
 * `read` returned (or throws what it threw) once admitted.
 */
export async function admitReading<T>(ctx: AppContext, domain: DomainDeps, bucket: LimitedBucket, read: (accountId: string) => Promise<T>): Promise<T> {
  let reading: Promise<T> | undefined;
  const admission = await admit(domain, presentedKey(ctx.get('Authorization')), bucket, (accountId) => {
    reading = read(accountId);
    reading.catch(() => undefined); // awaited below once admitted; a refused request leaves it
  });
  enter(ctx, admission);
  return reading ?? read(admission!.caller.account.id);
}

/**
 * RateLimit-Policy of a bucket's windows, written once per distinct set of limits: a
 * plan's limits seldom change, and this header is on every answer of the API.
 */
const policies = new Map<string, string>();
function policyOf(windows: Admission['decision']['windows']): string {
  let id = '';
  for (const w of windows) id += `${w.window}:${w.limit};`;
  let policy = policies.get(id);
  if (policy === undefined) {
    policy = formatRateLimitPolicy(windows.map((w) => ({ name: w.window, quota: w.limit, windowSeconds: ceilSeconds(WINDOW_MS[w.window]) })));
    // Plans are few; a store of many custom plans is bounded all the same.
    if (policies.size >= 1024) policies.clear();
    policies.set(id, policy);
  }
  return policy;
}

function enter(ctx: AppContext, admission: Admission | null): void {
  if (!admission) throw noSuchRoute(ctx);
  ctx.state.caller = admission.caller;
  ctx.state.admission = admission;
  for (const prefix of ['RateLimit', 'X-RateLimit']) {
    ctx.set(`${prefix}-Limit`, String(admission.shown.limit));
    ctx.set(`${prefix}-Remaining`, String(admission.shown.remaining));
    ctx.set(`${prefix}-Reset`, String(admission.resetSeconds));
  }
  // Every window of the bucket as a policy, named after it; the shown window's state in
  // RateLimit, so that its r and t are the trio's Remaining and Reset and its policy's q
  // the trio's Limit.
  ctx.set(RATE_LIMIT_POLICY_HEADER, policyOf(admission.decision.windows));
  ctx.set(RATE_LIMIT_HEADER, formatRateLimit({ name: admission.shown.window, remaining: admission.shown.remaining, resetSeconds: admission.resetSeconds }));
  if (admission.refusal) {
    ctx.set('Retry-After', String(admission.resetSeconds));
    throw admission.refusal;
  }
}
