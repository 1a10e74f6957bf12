// When to try a webhook again (ND-DELIVERY, WH-RETRY): the contract's retry schedule
// (info.x-webhook-delivery), a few attempts each waiting longer than the last, with
// jitter so that retries after an outage spread out.
import { WEBHOOK_DELIVERY } from '../../../contract/numbers.ts';

/** Each wait is scaled by a random factor in [1 - JITTER, 1 + JITTER]. */
export const JITTER = WEBHOOK_DELIVERY.jitter;

/** The contract's waits before each retry, in milliseconds. */
const SCHEDULE_MS = WEBHOOK_DELIVERY.retryDelaysSeconds.map((s) => s * 1000);

/** The first wait of the contract's schedule: WEBHOOK_BASE_DELAY_MS's default. */
export const CONTRACT_BASE_DELAY_MS = SCHEDULE_MS[0] ?? 0;

/** Attempts in all by the contract: WEBHOOK_MAX_ATTEMPTS's default. */
export const CONTRACT_MAX_ATTEMPTS = WEBHOOK_DELIVERY.attempts;

/** The longest an attempt waits for an answer by the contract: WEBHOOK_TIMEOUT_MS's default. */
export const CONTRACT_TIMEOUT_MS = WEBHOOK_DELIVERY.timeoutSeconds * 1000;

/**
 * The nominal wait after failed attempt `attempt` (1-based): the contract's schedule,
 * scaled so that its first wait is `baseDelayMs` (a test or a deployment shortens the
 * whole schedule with WEBHOOK_BASE_DELAY_MS and keeps its shape). Past the schedule's
 * end, when WEBHOOK_MAX_ATTEMPTS allows more attempts than the contract, each wait grows
 * by the schedule's last step.
 */
function nominalDelayMs(attempt: number, baseDelayMs: number): number {
  const scale = CONTRACT_BASE_DELAY_MS > 0 ? baseDelayMs / CONTRACT_BASE_DELAY_MS : 1;
  const stated = SCHEDULE_MS[attempt - 1];
  if (stated !== undefined) return stated * scale;
  const last = SCHEDULE_MS.at(-1) ?? baseDelayMs;
  const before = SCHEDULE_MS.at(-2) ?? last;
  return last * scale * (last / before) ** (attempt - SCHEDULE_MS.length);
}

/**
 * Milliseconds to wait after failed attempt number `attempt` (1-based) before the next,
 * or null when `attempt` was the last one allowed.
 */
export function retryDelayMs(attempt: number, maxAttempts: number, baseDelayMs: number, random: () => number = Math.random): number | null {
  if (attempt >= maxAttempts) return null;
  return Math.round(nominalDelayMs(attempt, baseDelayMs) * (1 - JITTER + 2 * JITTER * random()));
}
