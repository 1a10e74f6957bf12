// Which checks a run executes and which of them its verdict requires.
import type { Check } from './check.ts';
import type { ResolvedOptions } from './options.ts';

export function isRequired(check: Check, options: Pick<ResolvedOptions, 'profile'>): boolean {
  return check.profiles.includes(options.profile) && !(check.optionalIn ?? []).includes(options.profile);
}

export function areaOf(check: Check): string {
  return check.id.split('.')[0] ?? check.id;
}

/** Selection by check ID, area, need or clause ID, with `*` wildcards. */
export function selectChecks(checks: readonly Check[], options: Pick<ResolvedOptions, 'only' | 'skip'>): Check[] {
  const matches = (check: Check, pattern: string) => {
    const regex = new RegExp(`^${pattern.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`, 'i');
    return [check.id, areaOf(check), ...(check.needs ?? []), ...check.clauses, ...(check.decisions ?? []), check.phase ?? 'main'].some((name) => regex.test(name));
  };
  return checks.filter(
    (check) => (options.only.length === 0 || options.only.some((p) => matches(check, p))) && !options.skip.some((p) => matches(check, p)),
  );
}
