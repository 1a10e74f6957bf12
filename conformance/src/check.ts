// What a check is. A check is a small async function: it returns when the behaviour
// holds and throws CheckFailure (outcome.ts) saying what was expected, what was
// received, which clause broke and how to fix it. `asserts` says what "holds" means.
import type { ClauseId, DecisionId } from './clauses.ts';
import type { CheckContext } from './context.ts';
import type { JobKind } from './implementation/profile.ts';
import type { ResolvedOptions } from './options.ts';
import type { Need, Phase, Profile } from './outcome.ts';

export interface Check {
  /** Stable: reports, CI filters and fixtures refer to it. `<area>.<behaviour>`. */
  id: string;
  title: string;
  /**
   * What the check asserts, in words a reader of `--list` can hold an implementation
   * to: the meaning of the clause as observed from outside, not the check's name.
   */
  asserts: string;
  /** The source clauses this check proves. */
  clauses: readonly ClauseId[];
  /** The contract decisions it also enforces when the contract profile is in force. */
  decisions?: readonly DecisionId[];
  /** Profiles it runs in; in any other it is reported not applicable. */
  profiles: readonly Profile[];
  /**
   * Profiles in which it runs and is shown but never decides the verdict: a flaw it finds
   * is a warning, and its absence fails nothing.
   */
  optionalIn?: readonly Profile[];
  /**
   * Profiles in which it need not run, since what it judges may be absent there (a
   * decision beyond the source that the implementation may not claim, a balance it may
   * not show): not running fails nothing, but a flaw it finds fails the verdict as any
   * other check's does.
   */
  notRequiredIn?: readonly Profile[];
  needs?: readonly Need[];
  phase?: Phase;
  /**
   * Main-phase checks run in two lanes at once: `requests` (refused requests on the keys
   * without jobs, bound by their rate limits) and `jobs` (the run's jobs and webhooks,
   * bound by how long they take). Default `jobs`.
   */
  lane?: 'requests' | 'jobs';
  /**
   * The seconds this check's own waits may take (webhooks awaited, sleeps, the requests
   * of a day spent), beyond what every check is allowed (a request at its timeout, two
   * rate-limit windows, a step) and beyond the run's shared jobs (bound.ts). A check
   * still running at its limit is stopped and reported not run, with the wait it was in.
   */
  waits?: (allow: Allowances) => number;
  /**
   * The most creates of each kind this check itself may send that a service could accept
   * and charge for (budget.ts adds the run's shared jobs): a request meant to be refused
   * counts too, since a broken service may accept it. Absent: none.
   */
  creates?: (options: ResolvedOptions) => Creates;
  /**
   * Work of the run shared between checks that may create jobs, counted once however many
   * of the selected checks use it: `exhaustion`, the first key taken over its limit.
   */
  shares?: readonly 'exhaustion'[];
  run(ctx: CheckContext): Promise<void>;
}

/** Creates by kind of job, each of which a service may charge at its price. */
export type Creates = Partial<Record<JobKind, number>>;

/** What a check's limit is made of, in seconds (bound.ts works them out for a run). */
export interface Allowances {
  options: ResolvedOptions;
  /** Rate-limit windows are moved over with a sandbox clock instead of waited out. */
  clock: boolean;
  /** A step of a check's requests: one of them may take the whole request timeout. */
  request: number;
  /** Getting past one full rate-limit window: a move of the clock, or the window waited out. */
  window: number;
  /** The longest a job of the kind takes (the implementation profile's timings, or --job-timeout). */
  job: (kind: JobKind) => number;
  /** The longest a webhook attempt comes after it is due (the profile's timings, or --webhook-retry-timeout). */
  delivery: number;
  /** A webhook retry awaited after a failed attempt: the first retry at its latest, then a delivery. */
  retry: number;
  /** One more of many requests sent back to back (a day's limit spent). */
  each: number;
}

export function defineCheck(check: Check): Check {
  return check;
}

/** The profile sets most checks use. */
export const ALL: readonly Profile[] = ['core', 'contract', 'production', 'mock'];
export const STATEFUL: readonly Profile[] = ['core', 'contract', 'production'];
export const SANDBOX: readonly Profile[] = ['core', 'contract'];
export const CONTRACT_ONLY: readonly Profile[] = ['contract'];
