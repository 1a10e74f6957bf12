// When to try a webhook again (ND-DELIVERY, WH-RETRY): a small number of attempts,
// each wait four times the last, with jitter so that retries after an outage spread out.

/** Growth of the wait between attempts. */
export const BACKOFF_FACTOR = 4;
/** Each wait is scaled by a random factor in [1 - JITTER, 1 + JITTER]. */
export const JITTER = 0.2;

/**
 * Milliseconds to wait after failed attempt number `attempt` (1-based) before the next,
 * or null when `attempt` was the last one allowed.
 */
export function retryDelayMs(attempt: number, maxAttempts: number, baseDelayMs: number, random: () => number = Math.random): number | null {
  if (attempt >= maxAttempts) return null;
  const nominal = baseDelayMs * BACKOFF_FACTOR ** (attempt - 1);
  return Math.round(nominal * (1 - JITTER + 2 * JITTER * random()));
}
