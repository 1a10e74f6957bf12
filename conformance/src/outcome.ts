// What a check can end as, and the typed errors that carry it there. A leaf: every
// other module of the runner may import it, it imports only the clause registry and
// the shape of a recorded exchange.
import type { ClauseId, DecisionId } from './clauses.ts';
import type { Exchange } from './http.ts';

export const PROFILES = ['core', 'contract', 'production', 'mock'] as const;
/** Which rules are in force: the source's (core), the contract's too, production's, or a mock's. */
export type Profile = (typeof PROFILES)[number];

/**
 * `warned`: an optional check (optional in the run's profile) that failed. It ran and its
 * failure is shown, but it never decides the verdict: `failed` is only what does.
 */
export type Outcome = 'passed' | 'failed' | 'warned' | 'skipped' | 'not_applicable';

/** What a check that found a flaw ends as: a failure when it can decide the verdict, a warning when it is optional. */
export function failedOutcome(optional: boolean): 'failed' | 'warned' {
  return optional ? 'warned' : 'failed';
}

/**
 * main: requests and the run's jobs; exhaust: a key taken over its limit; clock: what
 * needs a sandbox clock moved far (a day, a month, the whole retry schedule), after
 * everything else on those keys; generated: requests made from the schemas, only when a
 * run asks for them (--fuzz); passive: judging what was recorded.
 */
export type Phase = 'main' | 'exhaust' | 'clock' | 'generated' | 'passive';

/** What a check needs beyond the main key; a missing one skips it with a reason. */
export type Need = 'second-key' | 'empty-key' | 'receiver' | 'fail-trigger' | 'clock';

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

/** A shared job or request that a check builds on could not be made. */
export class PrerequisiteError extends Error {
  override name = 'PrerequisiteError';
}

export function fail(detail: FailureDetail): never {
  throw new CheckFailure(detail);
}

export function skip(reason: string): never {
  throw new CheckSkip('skipped', reason);
}

export function notApplicable(reason: string): never {
  throw new CheckSkip('not_applicable', reason);
}

/** How one check ended in a run, as the reports show it. */
export interface FailureReport {
  clause: string;
  message: string;
  expected?: string;
  received?: string;
  fix?: string;
  /** Request and response excerpts, secrets redacted. */
  exchanges: string[];
  /**
   * Shell commands that show the failure again, runnable as printed (report/reproduce.ts):
   * keys and the signing secret as environment variables, never in clear.
   */
  reproduction?: string[];
}

export interface CheckResult {
  id: string;
  title: string;
  area: string;
  clauses: string[];
  decisions: string[];
  phase: Phase;
  /** It must run: a required check that did not run fails the verdict. */
  required: boolean;
  /**
   * Optional in the run's profile: it runs and is shown, but never decides the verdict (a
   * flaw it finds is `warned`). A check neither required nor optional (one that needs a
   * sandbox clock, or judges what the implementation may not have) need not run, but
   * decides the verdict when it does.
   */
  optional: boolean;
  outcome: Outcome;
  /** Why it was skipped or not applicable. */
  reason?: string;
  /** What it found broken: for `failed`, and for `warned`, where it does not decide the verdict. */
  failure?: FailureReport;
  /** What held but is worth knowing, e.g. a receiver that answered slowly; never changes the outcome. */
  warnings?: string[];
  durationMs: number;
  /** The longest it was allowed to take, from its start (bound.ts); absent for a check the run did not reach. */
  limitSeconds?: number;
}
