// What an answer says of the key's rate limit, for callers that pace themselves before
// they get a 429: read from the IETF draft's structured fields when the answer has them
// (ND-RATELIMIT-FIELDS), else from the source's RateLimit-Limit, -Remaining and -Reset
// (RL-HEADERS), else from their X- twins. The syntax is contract/rateLimitFields.ts's, the
// server's own.
import {
  RATE_LIMIT_HEADER,
  RATE_LIMIT_POLICY_HEADER,
  RateLimitFieldError,
  parseRateLimit,
  parseRateLimitPolicy,
  type QuotaPolicy,
} from '../../contract/rateLimitFields.ts';
import { readHeader, type HeaderSource } from './verify.ts';

export interface RateLimitState {
  /** Requests the active window admits. */
  limit: number;
  /** Requests left in it. */
  remaining: number;
  /** Seconds until it starts again. */
  resetSeconds: number;
  /** The active window's name (`minute`, `day`) when the structured fields gave it. */
  window?: string;
  /** Every window of the bucket, when the answer carried RateLimit-Policy. */
  policies?: QuotaPolicy[];
  /** Which headers the figures came from. */
  source: 'structured' | 'trio' | 'x-trio';
}

/**
 * The rate-limit state an answer carries, or undefined when it carries none that reads
 * (a 401, say). Structured fields that do not parse, or that leave out a figure, fall back
 * to the trio rather than failing: the trio is what the source promises.
 */
export function rateLimitState(headers: HeaderSource): RateLimitState | undefined {
  return structured(headers) ?? trio(headers, 'RateLimit', 'trio') ?? trio(headers, 'X-RateLimit', 'x-trio');
}

function structured(headers: HeaderSource): RateLimitState | undefined {
  const state = readHeader(headers, RATE_LIMIT_HEADER);
  if (state === undefined) return undefined;
  try {
    const limits = parseRateLimit(state);
    const policyText = readHeader(headers, RATE_LIMIT_POLICY_HEADER);
    const policies = policyText === undefined ? undefined : parseRateLimitPolicy(policyText);
    // Of several service limits, the one closest to exhaustion binds the next request.
    const active = [...limits].sort((a, b) => a.remaining - b.remaining || (b.resetSeconds ?? 0) - (a.resetSeconds ?? 0))[0]!;
    const quota = policies?.find((p) => p.name === active.name)?.quota ?? integer(readHeader(headers, 'RateLimit-Limit'));
    if (quota === undefined || active.resetSeconds === undefined) return undefined;
    return {
      limit: quota,
      remaining: active.remaining,
      resetSeconds: active.resetSeconds,
      window: active.name,
      ...(policies ? { policies } : {}),
      source: 'structured',
    };
  } catch (error) {
    if (error instanceof RateLimitFieldError) return undefined;
    throw error;
  }
}

function trio(headers: HeaderSource, prefix: string, source: 'trio' | 'x-trio'): RateLimitState | undefined {
  const limit = integer(readHeader(headers, `${prefix}-Limit`));
  const remaining = integer(readHeader(headers, `${prefix}-Remaining`));
  const resetSeconds = integer(readHeader(headers, `${prefix}-Reset`));
  return limit === undefined || remaining === undefined || resetSeconds === undefined ? undefined : { limit, remaining, resetSeconds, source };
}

function integer(text: string | undefined): number | undefined {
  return text !== undefined && /^\s*\d{1,15}\s*$/.test(text) ? Number(text) : undefined;
}
