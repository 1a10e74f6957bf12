import { admit, presentedKey, type Admission } from '../domain/admission.ts';
import type { DomainDeps } from '../domain/deps.ts';
import type { LimitedBucket, WindowName } from '../domain/model.ts';
import { WINDOWS, WINDOW_MS, ceilSeconds } from '../domain/rateLimits.ts';
import { RATE_LIMIT_HEADER, RATE_LIMIT_POLICY_HEADER, formatRateLimitPolicy, rateLimitWriter } from '../../../contract/rateLimitFields.ts';
import { noSuchRoute } from './errors.ts';
import type { AppContext, Middleware } from './state.ts';

/**
 * The request's Authorization, as Koa's ctx.get reads it, from Node's lowercased headers
 * directly: ctx.get lowers the name it is given on every call, and this is read on every
 * request. A repeated Authorization never gets here (refuseAmbiguousHeaders).
 */
const authorizationOf = (ctx: AppContext): string => ctx.req.headers.authorization ?? '';

/**
 * Steps 1 and 2 of every /v1 request: the caller is admitted for the operation's bucket.
 * The headers of the shown window go on every answer from here on, success or error,
 * with their X- twins (RL-HEADERS, RL-HEADERS-COMPAT), and the same figures in the IETF
 * draft's structured fields, RateLimit-Policy and RateLimit (ND-RATELIMIT-FIELDS);
 * Retry-After only on the 429 (RL-RETRY-AFTER-ONLY-429).
 */
export function admitted(domain: DomainDeps, bucket: LimitedBucket): Middleware {
  return async (ctx, next) => {
    enter(ctx, await admit(domain, presentedKey(authorizationOf(ctx)), bucket));
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
  const admission = await admit(domain, presentedKey(authorizationOf(ctx)), bucket, (accountId) => {
    reading = read(accountId);
    reading.catch(() => undefined); // awaited below once admitted; a refused request leaves it
  });
  enter(ctx, admission);
  return reading ?? read(admission!.caller.account.id);
}

/**
 * RateLimit-Policy of a bucket's windows, written once per distinct set of limits: a
 * plan's limits seldom change, and this header is on every answer of the API. The last
 * set written is checked first, which spares the common case (every caller on one plan)
 * building a key to look up.
 */
const policies = new Map<string, string>();
let lastLimits: readonly number[] = [];
let lastPolicy = '';
function sameLimits(windows: Admission['decision']['windows'], limits: readonly number[]): boolean {
  if (windows.length !== limits.length) return false;
  for (let i = 0; i < windows.length; i++) if (windows[i]!.limit !== limits[i]) return false;
  return true;
}
function policyOf(windows: Admission['decision']['windows']): string {
  if (sameLimits(windows, lastLimits)) return lastPolicy;
  let id = '';
  for (const w of windows) id += `${w.window}:${w.limit};`;
  let policy = policies.get(id);
  if (policy === undefined) {
    policy = formatRateLimitPolicy(windows.map((w) => ({ name: w.window, quota: w.limit, windowSeconds: ceilSeconds(WINDOW_MS[w.window]) })));
    // Plans are few; a store of many custom plans is bounded all the same.
    if (policies.size >= 1024) policies.clear();
    policies.set(id, policy);
  }
  lastLimits = windows.map((w) => w.limit);
  lastPolicy = policy;
  return policy;
}

/** RateLimit of each window: its name checked and quoted once, not on every answer. */
const RATE_LIMIT_OF = Object.fromEntries(WINDOWS.map((w) => [w, rateLimitWriter(w)])) as Record<WindowName, (remaining: number, resetSeconds: number) => string>;

function enter(ctx: AppContext, admission: Admission | null): void {
  if (!admission) throw noSuchRoute(ctx);
  ctx.state.caller = admission.caller;
  ctx.state.admission = admission;
  const { shown, resetSeconds } = admission;
  const limit = String(shown.limit);
  const remaining = String(shown.remaining);
  const reset = String(resetSeconds);
  // Straight onto Node's response (what Koa's ctx.set does for a string, less its
  // delegation): these nine fields are on every answer of the API.
  const res = ctx.res;
  res.setHeader('RateLimit-Limit', limit);
  res.setHeader('RateLimit-Remaining', remaining);
  res.setHeader('RateLimit-Reset', reset);
  res.setHeader('X-RateLimit-Limit', limit);
  res.setHeader('X-RateLimit-Remaining', remaining);
  res.setHeader('X-RateLimit-Reset', reset);
  // Every window of the bucket as a policy, named after it; the shown window's state in
  // RateLimit, so that its r and t are the trio's Remaining and Reset and its policy's q
  // the trio's Limit.
  res.setHeader(RATE_LIMIT_POLICY_HEADER, policyOf(admission.decision.windows));
  res.setHeader(RATE_LIMIT_HEADER, RATE_LIMIT_OF[shown.window](shown.remaining, resetSeconds));
  if (admission.refusal) {
    ctx.set('Retry-After', reset);
    throw admission.refusal;
  }
}
