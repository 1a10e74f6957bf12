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
