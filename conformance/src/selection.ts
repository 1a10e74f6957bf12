// Which checks a run executes and which of them its verdict requires.
import type { Check } from './check.ts';
import type { ResolvedOptions } from './options.ts';
import type { Need } from './outcome.ts';

/**
 * Required checks fail the verdict when they do not run. A check that needs a sandbox
 * clock never is: the source does not ask for one, so a run without a clock keeps the
 * verdict it had, with those checks reported as not run. Nor is one optional or not
 * required in the profile.
 */
export function isRequired(check: Check, options: Pick<ResolvedOptions, 'profile'>): boolean {
  const { profile } = options;
  return check.profiles.includes(profile) && !(check.optionalIn ?? []).includes(profile) && !(check.notRequiredIn ?? []).includes(profile) && !(check.needs ?? []).includes('clock');
}

/**
 * Optional checks run and are shown, but never decide the verdict: a flaw one finds is a
 * warning. A check that is neither required nor optional (one that needs a sandbox clock,
 * or is not required in the profile) need not run, and decides the verdict when it does.
 */
export function isOptional(check: Check, options: Pick<ResolvedOptions, 'profile'>): boolean {
  return check.profiles.includes(options.profile) && (check.optionalIn ?? []).includes(options.profile);
}

export function areaOf(check: Check): string {
  return check.id.split('.')[0] ?? check.id;
}

/** Selection by check ID, area, need or clause ID, with `*` wildcards. */
export function selectChecks(checks: readonly Check[], options: Pick<ResolvedOptions, 'only' | 'skip'> & { fuzz?: number }): Check[] {
  const matches = (check: Check, pattern: string) => {
    const regex = new RegExp(`^${pattern.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`, 'i');
    return [check.id, areaOf(check), ...(check.needs ?? []), ...check.clauses, ...(check.decisions ?? []), check.phase ?? 'main'].some((name) => regex.test(name));
  };
  return checks.filter(
    (check) => (check.phase !== 'generated' || (options.fuzz ?? 0) > 0) && (options.only.length === 0 || options.only.some((p) => matches(check, p))) && !options.skip.some((p) => matches(check, p)),
  );
}

/** A value the run was not given that some check its verdict requires cannot do without. */
export interface MissingValue {
  value: 'second-key' | 'empty-key' | 'signing-secret';
  /** The required checks that need it, in run order. */
  checks: string[];
}

/**
 * What the checks a run must pass need and were not given. Without it they would be
 * skipped, and a required check that does not run fails the verdict: the run would end
 * FAIL after all its requests, for something known before the first one.
 */
export function missingValues(
  checks: readonly Check[],
  options: Pick<ResolvedOptions, 'profile' | 'only' | 'skip' | 'fuzz' | 'secondKey' | 'emptyKey' | 'signingSecret' | 'receiver'>,
): MissingValue[] {
  const required = selectChecks(checks, options).filter((check) => isRequired(check, options));
  const needing = (need: Need) => required.filter((check) => (check.needs ?? []).includes(need)).map((check) => check.id);
  const missing: MissingValue[] = [];
  if (!options.secondKey) missing.push({ value: 'second-key', checks: needing('second-key') });
  if (!options.emptyKey) missing.push({ value: 'empty-key', checks: needing('empty-key') });
  // --no-receiver says the run goes without webhooks: then the secret verifies nothing.
  if (!options.signingSecret && options.receiver !== false) missing.push({ value: 'signing-secret', checks: needing('receiver') });
  return missing.filter((entry) => entry.checks.length > 0);
}

/** Whether the run starts its shared jobs: a stateful profile with a check that acts (not only judges what was recorded). */
export function startsJobs(selected: readonly Check[], options: Pick<ResolvedOptions, 'profile'>): boolean {
  return options.profile !== 'mock' && selected.some((check) => check.profiles.includes(options.profile) && check.phase !== 'passive');
}
