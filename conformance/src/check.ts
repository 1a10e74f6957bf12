// What a check is. A check is a small async function: it returns when the behaviour
// holds and throws CheckFailure (outcome.ts) saying what was expected, what was
// received, which clause broke and how to fix it. `asserts` says what "holds" means.
import type { ClauseId, DecisionId } from './clauses.ts';
import type { CheckContext } from './context.ts';
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

export function defineCheck(check: Check): Check {
  return check;
}

/** The profile sets most checks use. */
export const ALL: readonly Profile[] = ['core', 'contract', 'production', 'mock'];
export const STATEFUL: readonly Profile[] = ['core', 'contract', 'production'];
export const SANDBOX: readonly Profile[] = ['core', 'contract'];
export const CONTRACT_ONLY: readonly Profile[] = ['contract'];
