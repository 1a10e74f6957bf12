// What the RateLimit-* headers of the run's answers say, and what they must mean: the
// limit of the active window, the requests left in it, the seconds until it resets. The
// runner reads windows only from these values, so it checks them before it waits on
// them (pacer.ts bounds every wait by windowFor).
import {
  RateLimitFieldError,
  parseRateLimit,
  parseRateLimitPolicy,
  structuredFieldsDisagree,
  type QuotaPolicy,
  type ServiceLimit,
} from '../../../contract/rateLimitFields.ts';
import type { Exchange } from '../http.ts';
import type { RateLimitWindow } from '../implementation/profile.ts';
import type { ResolvedOptions } from '../options.ts';
import type { Bucket } from '../pacer.ts';

export interface Advertised {
  limit: number;
  remaining: number;
  reset: number;
}

/** Reset times of one window may differ by this much between answers (whole seconds, clocks). */
const SAME_WINDOW_MS = 1500;

/** Answers that must describe the key's window: successes and 429s of the API's own keys. */
export function limitedAnswers(log: readonly Exchange[]): Exchange[] {
  return log.filter(
    (e) => e.bucket !== undefined && (e.key === 'main' || e.key === 'second' || e.key === 'empty') && ((e.status >= 200 && e.status < 300) || e.status === 429),
  );
}

/** The three RateLimit headers as integers, when all three are. */
export function advertised(exchange: Exchange): Advertised | undefined {
  const value = (name: string) => {
    const text = exchange.responseHeaders[name];
    return text !== undefined && /^\s*\d+\s*$/.test(text) ? Number(text) : undefined;
  };
  const limit = value('ratelimit-limit');
  const remaining = value('ratelimit-remaining');
  const reset = value('ratelimit-reset');
  return limit === undefined || remaining === undefined || reset === undefined ? undefined : { limit, remaining, reset };
}

/**
 * The longest window a RateLimit-Limit value can describe: the window of the expected
 * limit it equals (the source's minute or day), else the longest window there is.
 */
export function windowFor(options: Pick<ResolvedOptions, 'expectedLimits' | 'windowSeconds'>, bucket: Bucket, limit: number | undefined): number {
  const index = limit === undefined ? -1 : options.expectedLimits[bucket].indexOf(limit);
  return (index >= 0 ? options.windowSeconds[index] : undefined) ?? Math.max(...options.windowSeconds);
}

export interface Regression {
  earlier: Exchange;
  later: Exchange;
  why: string;
}

/** Whether a key's account time (a sandbox clock) may have moved between two instants. */
export type MovedBetween = (key: string, from: number, to: number) => boolean;

/** The longest window, in milliseconds, that an answer's RateLimit-Limit can describe. */
export type WindowMsOf = (exchange: Exchange, limit: number) => number;

/** How many answers back a later one is compared with: a run holds few requests in flight at once. */
const COMPARED_BACK = 12;

/**
 * Pairs of answers of one key and bucket, one answered before the other was sent, that
 * describe the same window (same limit, same reset moment within 1.5 s, reset moments
 * closer than the window is long, `windowMsOf`, and the later one sent before the
 * earlier one's reset moment could have come) and where the count went the wrong way:
 * Remaining rose, or fell less than the successes between them and the later one took.
 * A new window (its reset moment later) may start over, and so may room freed at the
 * reset moment an answer announced: a sliding log's oldest request leaving.
 *
 * `window` is how the implementation says it counts. Under a fixed window nothing frees
 * room before the reset. Under a sliding window room comes back as time passes: a
 * sliding counter's weight (or a token bucket's refill) frees at most the limit over a
 * window's length, and whole numbers round it by one; a sliding log frees what the key
 * sent a window earlier, whatever its Reset says (the oldest request leaving, or the
 * whole window emptying). So where the window is sliding or not stated, the larger of
 * the two is allowed (the key's requests are `sent`, every answer of it, refusals and
 * invalid requests too), and a count that does not go down shows over several
 * successes rather than one.
 *
 * Pairs across a move of the key's sandbox clock are not compared: the move may have
 * ended the window, and reset moments no longer line up in the runner's time.
 */
export function remainingRegressions(
  answers: readonly Exchange[],
  moved: MovedBetween = () => false,
  windowMsOf: WindowMsOf = () => Number.POSITIVE_INFINITY,
  window: RateLimitWindow | null = 'fixed',
  sent: readonly Exchange[] = answers,
): Regression[] {
  const found: Regression[] = [];
  // Each stream's requests by the time they were sent, for what may leave a sliding log.
  const sentAt = new Map<string, number[]>();
  for (const exchange of sent) {
    const name = `${exchange.key}:${exchange.bucket}`;
    const times = sentAt.get(name);
    if (times) times.push(exchange.startedAt);
    else sentAt.set(name, [exchange.startedAt]);
  }
  for (const times of sentAt.values()) times.sort((x, y) => x - y);
  const streams = new Map<string, Exchange[]>();
  for (const exchange of answers) {
    const name = `${exchange.key}:${exchange.bucket}`;
    const stream = streams.get(name);
    if (stream) stream.push(exchange);
    else streams.set(name, [exchange]);
  }
  const succeeded = (exchange: Exchange) => exchange.status >= 200 && exchange.status < 300;
  for (const stream of streams.values()) {
    const ordered = [...stream].sort((a, b) => a.startedAt - b.startedAt);
    for (let i = 1; i < ordered.length; i++) {
      const later = ordered[i]!;
      const b = advertised(later);
      if (!b) continue;
      for (let j = i - 1; j >= Math.max(0, i - COMPARED_BACK); j--) {
        const earlier = ordered[j]!;
        // Only an answer that arrived before the later request was sent tells what came first.
        if (earlier.startedAt + earlier.durationMs > later.startedAt) continue;
        if (moved(later.key, earlier.startedAt, later.startedAt + later.durationMs)) continue;
        const a = advertised(earlier);
        if (!a || a.limit !== b.limit) continue;
        const resetAtA = earlier.startedAt + earlier.durationMs + a.reset * 1000;
        const resetAtB = later.startedAt + later.durationMs + b.reset * 1000;
        if (Math.abs(resetAtA - resetAtB) > SAME_WINDOW_MS) continue;
        // And surely one window: had the later answer been of the next one, its reset moment
        // would lie a whole window after the earlier's. The earliest the earlier's can be (the
        // server counted as it was sent and rounded up to whole seconds) and the latest the
        // later's can be (counted as it was answered) are less than a window apart. A loaded
        // machine that delays answers cannot then pass a short window's successor off as it.
        const earliestA = earlier.startedAt + (a.reset - 1) * 1000;
        const latestB = later.startedAt + later.durationMs + b.reset * 1000;
        const windowMs = windowMsOf(later, b.limit);
        if (latestB - earliestA >= windowMs) continue;
        // The room the earlier answer's reset frees may already be back.
        if (later.startedAt + later.durationMs >= earliestA) continue;
        // The successes surely counted between the two: sent after the earlier answer,
        // answered before the later request; and the later one itself.
        let counted = succeeded(later) ? 1 : 0;
        for (let k = j + 1; k < i; k++) {
          const between = ordered[k]!;
          if (succeeded(between) && between.startedAt >= earlier.startedAt + earlier.durationMs && between.startedAt + between.durationMs <= later.startedAt) counted++;
        }
        const elapsedMs = later.startedAt + later.durationMs - earlier.startedAt;
        const freed = window === 'fixed' ? 0 : Math.max(Math.ceil((b.limit * elapsedMs) / windowMs) + 1, leaving(sentAt.get(`${later.key}:${later.bucket}`) ?? [], earlier, later, windowMs) + 1);
        const most = Math.max(0, a.remaining - counted + freed);
        if (b.remaining <= most) continue;
        if (b.remaining > a.remaining) found.push({ earlier, later, why: `Remaining went up from ${a.remaining} to ${b.remaining} within one window` });
        else found.push({ earlier, later, why: `Remaining ${b.remaining === a.remaining ? `stayed ${a.remaining}` : `fell only from ${a.remaining} to ${b.remaining}`} after ${counted} counted request${counted === 1 ? '' : 's'} within one window${freed > 0 ? ` (at most ${freed} freed meanwhile by a sliding window)` : ''}` });
        // One pair per later answer says enough.
        break;
      }
    }
  }
  return found;
}

/** Whole-second rounding of the windows' edges, on either side. */
const EDGE_MS = 1000;

/**
 * How many of the key's requests a sliding log may have let go between two answers: those
 * counted a window before the span from the earlier request's sending to the later one's
 * answer. `times` is sorted.
 */
function leaving(times: readonly number[], earlier: Exchange, later: Exchange, windowMs: number): number {
  if (!Number.isFinite(windowMs)) return 0;
  const from = earlier.startedAt - windowMs - EDGE_MS;
  const to = later.startedAt + later.durationMs - windowMs + EDGE_MS;
  return firstAtOrAfter(times, to + 1) - firstAtOrAfter(times, from);
}

/** The index of the first time at or after `t` in sorted `times`. */
function firstAtOrAfter(times: readonly number[], t: number): number {
  let low = 0;
  let high = times.length;
  while (low < high) {
    const middle = (low + high) >> 1;
    if (times[middle]! < t) low = middle + 1;
    else high = middle;
  }
  return low;
}

/** Each RateLimit-* header and the X-RateLimit-* one that repeats it (RL-HEADERS-COMPAT). */
const COMPAT_PAIRS = [
  ['ratelimit-limit', 'x-ratelimit-limit'],
  ['ratelimit-remaining', 'x-ratelimit-remaining'],
  ['ratelimit-reset', 'x-ratelimit-reset'],
] as const;

/** Whether an answer's X-RateLimit-* say what its RateLimit-* say: absent together or equal. */
export function compatHeadersAgree(headers: Readonly<Record<string, string | undefined>>): boolean {
  return COMPAT_PAIRS.every(([name, compat]) => (headers[name] ?? null) === (headers[compat] ?? null));
}

/** The pairs as an answer has them, for a failure's "received". */
export function describeCompatPairs(headers: Readonly<Record<string, string | undefined>>): string {
  return COMPAT_PAIRS.map(([name, compat]) => `${name}=${headers[name] ?? '(absent)'} ${compat}=${headers[compat] ?? '(absent)'}`).join('; ');
}

/** What an answer's RateLimit-Policy and RateLimit say, judged against its trio (ND-RATELIMIT-FIELDS). */
export type StructuredVerdict =
  | { sent: false }
  | { sent: true; problem: null }
  | { sent: true; problem: string; rule: 'syntax' | 'agreement' };

/**
 * Whether an answer's structured fields read as the IETF draft (revision 11, or 10: alike) says, through
 * contract/rateLimitFields.ts's RFC 9651 parser, and say what its RateLimit-Limit,
 * -Remaining and -Reset say. `agreement: false` judges the syntax alone (a mock's
 * examples describe no window). An answer with neither field was not sent them: the
 * source does not name them.
 */
export function judgeStructuredFields(headers: Readonly<Record<string, string | undefined>>, agreement = true): StructuredVerdict {
  const policyText = headers['ratelimit-policy'];
  const stateText = headers['ratelimit'];
  if (policyText === undefined && stateText === undefined) return { sent: false };
  let policies: QuotaPolicy[] | undefined;
  let limits: ServiceLimit[] | undefined;
  try {
    if (policyText !== undefined) policies = parseRateLimitPolicy(policyText);
    if (stateText !== undefined) limits = parseRateLimit(stateText);
  } catch (error) {
    if (error instanceof RateLimitFieldError) return { sent: true, problem: error.message, rule: 'syntax' };
    throw error;
  }
  if (!agreement) return { sent: true, problem: null };
  const value = (name: string) => {
    const text = headers[name];
    return text !== undefined && /^\s*\d+\s*$/.test(text) ? Number(text) : undefined;
  };
  const trio = { limit: value('ratelimit-limit'), remaining: value('ratelimit-remaining'), reset: value('ratelimit-reset') };
  if (trio.limit === undefined || trio.remaining === undefined || trio.reset === undefined) {
    return { sent: true, problem: 'RateLimit-Policy or RateLimit came without RateLimit-Limit, -Remaining and -Reset as integers to agree with', rule: 'agreement' };
  }
  const full = { limit: trio.limit, remaining: trio.remaining, reset: trio.reset };
  let problem: string | null;
  if (!limits) problem = policies!.some((p) => p.quota === full.limit) ? null : `RateLimit-Policy has no policy with q=${full.limit}, the RateLimit-Limit`;
  else if (!policies) problem = limits.some((l) => l.remaining === full.remaining && l.resetSeconds === full.reset) ? null : `no member of RateLimit says r=${full.remaining};t=${full.reset}, as RateLimit-Remaining and -Reset do`;
  else problem = structuredFieldsDisagree(policies, limits, full);
  return problem === null ? { sent: true, problem: null } : { sent: true, problem, rule: 'agreement' };
}

/** The five fields as an answer has them, for a failure's "received". */
export function describeStructuredFields(headers: Readonly<Record<string, string | undefined>>): string {
  return ['ratelimit-policy', 'ratelimit', 'ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset'].map((n) => `${n}: ${headers[n] ?? '(absent)'}`).join('; ');
}
