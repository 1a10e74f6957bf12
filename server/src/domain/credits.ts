import { CREDIT_COSTS, MONTHLY_CREDITS } from '../../../contract/numbers.ts';
import type { JobKind } from './model.ts';

/** Credits per job (ND-CREDIT-COST): flat, whatever the inputs, as each create's x-credit-cost states. */
export const CREDIT_COST: Readonly<Record<JobKind, number>> = CREDIT_COSTS;

/** Monthly credits of an account created without an explicit amount: the contract's default plan. */
export const DEFAULT_MONTHLY_CREDITS = MONTHLY_CREDITS;

/** The credit period of an instant: its UTC calendar month, "YYYY-MM". */
export function periodOf(now: number): string {
  return new Date(now).toISOString().slice(0, 7);
}

/** First instant of the period and of the next one (exclusive end). */
export function periodBounds(period: string): { start: number; end: number } {
  const [year, month] = period.split('-').map(Number) as [number, number];
  return { start: Date.UTC(year, month - 1, 1), end: Date.UTC(year, month, 1) };
}

/**
 * The most credits an account has in a month: its monthly credits and the month's grants
 * together (the quota `GET /v1/me` shows). Far below 2^53, so every amount, and every sum
 * of them a balance takes, is exact in a JS number; below 2^31 − 1, so it fits SQLite's
 * and PostgreSQL's integer columns with room for a month's grants on top. An operator's
 * change that would take a month past it is refused and writes nothing.
 */
export const MAX_CREDITS = 1_000_000_000;

/** Whether `n` is an amount of credits an account may hold: a whole number from 0 to MAX_CREDITS. */
export function isCreditAmount(n: number): boolean {
  return Number.isSafeInteger(n) && n >= 0 && n <= MAX_CREDITS;
}

/**
 * An amount of credits as a store holds it, read within the bound: a store written before
 * the bound held (or by hand) may hold more, a fraction or a number beyond 2^53. Such an
 * amount is read as the nearest whole number within the bound, so the account keeps
 * working on a balance that is never more than the bound, and `held` keeps the stored
 * amount, exact, for the report that names it.
 */
export function readCredits(stored: unknown): { credits: number; held?: string } {
  const exact =
    typeof stored === 'bigint' ? stored
    : typeof stored === 'number' ? (Number.isSafeInteger(stored) ? BigInt(stored) : undefined)
    : typeof stored === 'string' && /^-?[0-9]+$/.test(stored) ? BigInt(stored) // PostgreSQL's BIGINT and NUMERIC
    : undefined;
  if (exact !== undefined && exact >= 0n && exact <= BigInt(MAX_CREDITS)) return { credits: Number(exact) };
  const n = Number(stored);
  const credits = Number.isNaN(n) || n < 0 ? 0 : Math.min(Math.floor(n), MAX_CREDITS);
  return { credits, held: String(stored) };
}

/** Whether amounts as a store holds them (a month's monthly credits and grants, and what a change adds) are each within the bound and together at most MAX_CREDITS. */
export function withinCreditBound(...stored: unknown[]): boolean {
  let total = 0;
  for (const amount of stored) {
    const { credits, held } = readCredits(amount);
    if (held !== undefined) return false;
    total += credits;
  }
  return total <= MAX_CREDITS;
}
