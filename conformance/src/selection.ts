// Which checks a run executes and which of them its verdict requires.
import type { Check } from './check.ts';
import type { ResolvedOptions } from './options.ts';

/**
 * Required checks fail the verdict when they do not run. A check that needs a sandbox
 * clock never is: the source does not ask for one, so a run without a clock keeps the
 * verdict it had, with those checks reported as not run.
 */
export function isRequired(check: Check, options: Pick<ResolvedOptions, 'profile'>): boolean {
  return check.profiles.includes(options.profile) && !(check.optionalIn ?? []).includes(options.profile) && !(check.needs ?? []).includes('clock');
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
