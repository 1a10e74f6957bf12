// What a check is, what it can report, and the typed failure it raises. A check is a
// small async function: it returns when the behaviour holds and throws CheckFailure
// saying what was expected, what was received, which clause broke and how to fix it.
import type { ClauseId, DecisionId } from './clauses.ts';
import type { Exchange } from './http.ts';
import type { CheckContext } from './context.ts';

export const PROFILES = ['core', 'contract', 'production', 'mock'] as const;
export type Profile = (typeof PROFILES)[number];

export type Outcome = 'passed' | 'failed' | 'skipped' | 'not_applicable';

/**
 * main: runs while the jobs of the run are processing, in list order.
 * exhaust: runs after main; may use up a key's generation window.
 * passive: runs last and only reads what was recorded.
 */
export type Phase = 'main' | 'exhaust' | 'passive';

/** What a check needs beyond the main key; a missing one skips it with a reason. */
export type Need = 'second-key' | 'empty-key' | 'receiver' | 'fail-trigger';

export interface Check {
  /** Stable: reports, CI filters and fixtures refer to it. `<area>.<behaviour>`. */
  id: string;
  title: string;
  /** The source clauses this check proves. */
  clauses: readonly ClauseId[];
  /** The contract decisions it also enforces when the contract profile is in force. */
  decisions?: readonly DecisionId[];
  /** Profiles it runs in; in any other it is reported not applicable. */
  profiles: readonly Profile[];
  /** Profiles in which it runs but its absence does not fail the verdict. */
  optionalIn?: readonly Profile[];
  needs?: readonly Need[];
  phase?: Phase;
  /**
   * Main-phase checks run in two lanes at once: `requests` (refused requests on the keys
   * without jobs, bound by their rate limits) and `jobs` (the run's jobs and webhooks,
   * bound by how long they take). Default `jobs`.
   */
  lane?: 'requests' | 'jobs';
  run(ctx: CheckContext): Promise<void>;
}

export interface FailureDetail {
  /** The clause (or decision) the observation breaks. */
  clause: ClauseId | DecisionId;
  message: string;
  expected?: string;
  received?: string;
  fix?: string;
  exchanges?: readonly Exchange[];
  /** Other excerpts, e.g. webhook deliveries. */
  evidence?: readonly string[];
}

export class CheckFailure extends Error {
  readonly detail: FailureDetail;
  constructor(detail: FailureDetail) {
    super(detail.message);
    this.name = 'CheckFailure';
    this.detail = detail;
  }
}

export class CheckSkip extends Error {
  readonly outcome: 'skipped' | 'not_applicable';
  constructor(outcome: 'skipped' | 'not_applicable', reason: string) {
    super(reason);
    this.name = 'CheckSkip';
    this.outcome = outcome;
  }
}

export function fail(detail: FailureDetail): never {
  throw new CheckFailure(detail);
}

export function defineCheck(check: Check): Check {
  return check;
}

/** The five profiles sets most checks use. */
export const ALL: readonly Profile[] = ['core', 'contract', 'production', 'mock'];
export const STATEFUL: readonly Profile[] = ['core', 'contract', 'production'];
export const SANDBOX: readonly Profile[] = ['core', 'contract'];
export const CONTRACT_ONLY: readonly Profile[] = ['contract'];
