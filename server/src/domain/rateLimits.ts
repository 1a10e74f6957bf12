// Fixed windows aligned on UTC minutes and days (RL-BUCKETS). Aligned windows make
// RateLimit-Reset and Retry-After exact and identical across API processes.
import { bucketWindows } from '../../../contract/numbers.ts';
import type { RateDecision, RatePlan, WindowLimits, WindowName, WindowState } from './model.ts';

export const WINDOWS: readonly WindowName[] = ['minute', 'day'];

/**
 * A bucket's limits as the contract states them (info.x-rate-limit-buckets). The
 * service counts the windows GET /v1/me shows, a minute's and a day's, so a bucket of
 * the contract must have exactly those.
 */
export function contractLimits(bucket: string): WindowLimits {
  const windows = bucketWindows(bucket);
  const limit = (name: WindowName) => {
    const window = windows.find((w) => w.name === name);
    if (!window) throw new Error(`the contract's ${bucket} bucket has no ${name} window, which GET /v1/me shows`);
    return window.limit;
  };
  if (windows.length !== WINDOWS.length) throw new Error(`the contract's ${bucket} bucket has windows ${windows.map((w) => w.name).join(', ')}; the service counts ${WINDOWS.join(' and ')}`);
  return { minute: limit('minute'), day: limit('day') };
}

/** Each window's length, as the contract's read bucket states it (the other buckets' windows of the same name agree: test/contract/numbers.test.ts). */
export const WINDOW_MS: Record<WindowName, number> = Object.fromEntries(
  WINDOWS.map((name) => [name, bucketWindows('read').find((w) => w.name === name)!.windowSeconds * 1000]),
) as Record<WindowName, number>;

/**
 * The most requests an operator's plan lets a window admit: far past any real plan, and
 * exact in a JS number, in Redis's Lua numbers (doubles) and in either store's counters.
 */
export const MAX_RATE_LIMIT = 1_000_000_000;

/** The contract's numbers: the default plan of every account (RL-BUCKETS). */
export const DEFAULT_PLAN: RatePlan = {
  read: contractLimits('read'),
  generation: contractLimits('generation'),
};

export function windowStart(window: WindowName, now: number): number {
  return now - (now % WINDOW_MS[window]);
}

/**
 * Decides a request from the counts already used in each window. `counts` are the
 * requests counted before this one. A request is admitted only if every window has
 * room; when admitted, every window counts it.
 */
export function decide(limits: WindowLimits, counts: Record<WindowName, number>, now: number, consume: boolean): RateDecision {
  const allowed = WINDOWS.every((w) => counts[w] < limits[w]);
  const counted = consume && allowed ? 1 : 0;
  const windows: WindowState[] = WINDOWS.map((w) => ({
    window: w,
    limit: limits[w],
    remaining: Math.max(0, limits[w] - counts[w] - counted),
    resetMs: windowStart(w, now) + WINDOW_MS[w] - now,
  }));
  return { allowed: consume ? allowed : true, windows };
}

/**
 * The window whose headers a response carries. On a refusal, the full window that
 * admits last (so Retry-After is the true wait); otherwise the window closest to
 * exhaustion: fewest remaining, then the later reset.
 */
export function activeWindow(decision: RateDecision): WindowState {
  // One pass, keeping the first of equals (what a stable sort's first would be): this
  // runs on every request, and a copy and a sort per request were for two windows.
  let shown: WindowState | undefined;
  for (const w of decision.windows) {
    if (decision.allowed) {
      if (!shown || w.remaining < shown.remaining || (w.remaining === shown.remaining && w.resetMs > shown.resetMs)) shown = w;
    } else if (w.remaining === 0 && (!shown || w.resetMs > shown.resetMs)) {
      shown = w;
    }
  }
  return shown!;
}

/** Whole seconds, rounded up, so a client that waits this long is never early. */
export function ceilSeconds(ms: number): number {
  return Math.max(1, Math.ceil(ms / 1000));
}
