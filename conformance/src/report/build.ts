// The report of a run from its check results: counts, verdict, exit code, the clause
// matrix; and the report of a run that could not start.
import { CHECKS } from '../checks/index.ts';
import { CLAUSES, DECISIONS } from '../clauses.ts';
import { excerpt, redact } from '../http.ts';
import type { ResolvedOptions } from '../options.ts';
import type { FailureDetail, FailureReport } from '../outcome.ts';
import { EXIT_CODES, type AbortKind, type CheckResult, type ClauseRow, type Counts, type Report } from './model.ts';

export const TOOL = 'avatar-api-conformance';
export const VERSION = '1.0.0';

// A warning is worse than a check that did not run (it saw the clause broken) and better
// than a failure (it decides nothing). A clause left unproven by a check that failed on
// another of its clauses is worse than one whose check was skipped: that check did run.
const SEVERITY = { failed: 6, warned: 5, not_proven: 4, skipped: 3, passed: 2, not_applicable: 1 } as const;

type CellOutcome = keyof typeof SEVERITY;

/** What a run's results count, as every report states them (a service run, a receiver's, the proxy's). */
export function countsOf(results: readonly CheckResult[]): Counts {
  const count = (outcome: CheckResult['outcome']) => results.filter((r) => r.outcome === outcome).length;
  return {
    passed: count('passed'),
    failed: count('failed'),
    warned: count('warned'),
    skipped: count('skipped'),
    notApplicable: count('not_applicable'),
    requiredNotRun: results.filter((r) => r.required && r.outcome === 'skipped').length,
  };
}

/**
 * The verdict: a failure fails it, and so does a required check that did not run; a
 * warning (an optional check's flaw) never does.
 */
export function verdictOf(counts: Counts): 'pass' | 'fail' {
  return counts.failed === 0 && counts.requiredNotRun === 0 ? 'pass' : 'fail';
}

export function clauseMatrix(results: readonly CheckResult[], registry: readonly { id: string; clauses: readonly string[] }[] = CHECKS): ClauseRow[] {
  const byId = new Map(results.map((result) => [result.id, result]));
  return CLAUSES.map((clause) => {
    const checks = registry.filter((check) => (check.clauses as readonly string[]).includes(clause.id)).map((check) => check.id);
    const ran = checks.flatMap((id): { id: string; outcome: CellOutcome; required: boolean; stoppedAt?: string }[] => {
      const result = byId.get(id);
      if (!result) return [];
      // A check that failed broke the clause its failure names; it stopped before it
      // could prove its other clauses, so for those it is "not proven", never "skipped":
      // it ran, and the report's counts of checks say so. A failure that names a contract
      // decision rather than one of the check's clauses leaves all of them broken, as it
      // always did.
      const own = result.failure?.clause !== undefined && result.clauses.includes(result.failure.clause);
      if ((result.outcome === 'failed' || result.outcome === 'warned') && own && result.failure!.clause !== clause.id) return [{ id, outcome: 'not_proven', required: false, stoppedAt: result.failure!.clause }];
      return [{ id, outcome: result.outcome, required: result.required }];
    });
    // An optional check that did not run (e.g. one that needs a sandbox clock), or one
    // stopped by another clause, leaves the clause to the checks that did run it; it
    // decides the row only when nothing else ran.
    const counted = ran.filter((r) => r.required ? r.outcome !== 'not_proven' : r.outcome !== 'skipped' && r.outcome !== 'not_proven');
    const outcomes = (counted.length > 0 ? counted : ran).map((r) => r.outcome);
    let outcome: ClauseRow['outcome'];
    if (checks.length === 0) outcome = (clause.observe as readonly string[]).includes('B') ? 'uncovered' : 'client';
    else if (outcomes.length === 0) outcome = 'not_applicable';
    else outcome = outcomes.reduce((worst, next) => (SEVERITY[next] > SEVERITY[worst] ? next : worst));
    const stopped = ran.filter((r) => r.outcome === 'not_proven');
    return {
      id: clause.id,
      sections: clause.sections,
      observe: [...clause.observe],
      rule: clause.rule,
      checks,
      outcome,
      ...(ran.length > 0 ? { cells: Object.fromEntries(ran.map((r) => [r.id, r.outcome])) } : {}),
      ...(outcome === 'not_proven' ? { stoppedBy: stopped.map((r) => ({ check: r.id, clause: r.stoppedAt! })) } : {}),
      ...('provenBy' in clause ? { provenBy: clause.provenBy } : {}),
    };
  });
}

/** The contract decisions and the checks that enforce them (for --list). */
export function decisionMatrix(): { id: string; rule: string; checks: string[] }[] {
  return DECISIONS.map((decision) => ({
    id: decision.id,
    rule: decision.rule,
    checks: CHECKS.filter((check) => (check.decisions ?? []).includes(decision.id)).map((check) => check.id),
  }));
}

/** What every report says about the run itself: the tool, the target and the times. */
function timing(options: ResolvedOptions, startedAt: number) {
  const finishedAt = options.now();
  return {
    tool: TOOL,
    version: VERSION,
    profile: options.profile,
    implementation: options.implementation.name,
    baseUrl: options.baseUrl,
    startedAt: new Date(startedAt).toISOString(),
    finishedAt: new Date(finishedAt).toISOString(),
    durationMs: finishedAt - startedAt,
  };
}

export function buildReport(options: ResolvedOptions, startedAt: number, results: CheckResult[], requests: number, deliveries: number, bound?: Report['bound'], more: Pick<Report, 'budget' | 'observations'> = {}): Report {
  const counts = countsOf(results);
  const verdict = verdictOf(counts);
  return {
    ...timing(options, startedAt),
    verdict,
    exitCode: EXIT_CODES[verdict],
    counts,
    results,
    clauses: clauseMatrix(results),
    requests,
    deliveries,
    ...(bound ? { bound: withoutChecks(bound) } : {}),
    ...more,
  };
}

/** The bound as a report states it: each check's limit is in its own result. */
function withoutChecks(bound: NonNullable<Report['bound']> & { checks?: unknown }): NonNullable<Report['bound']> {
  const { checks: _checks, ...rest } = bound;
  return rest;
}

export function aborted(options: ResolvedOptions, startedAt: number, kind: AbortKind, message: string, requests = 0, bound?: Report['bound']): Report {
  return {
    ...timing(options, startedAt),
    verdict: 'aborted',
    exitCode: EXIT_CODES[kind],
    abort: { kind, message },
    counts: countsOf([]),
    results: [],
    clauses: clauseMatrix([]),
    requests,
    deliveries: 0,
    ...(bound ? { bound: withoutChecks(bound) } : {}),
  };
}

/**
 * A failed check as every report shows it, a service's or a receiver's: each secret taken
 * out of its words, and at most three exchanges and three pieces of other evidence.
 */
export function reportedFailure(detail: FailureDetail, secrets: readonly string[]): FailureReport {
  const { clause, message, expected, received, fix, exchanges, evidence } = detail;
  return {
    clause,
    message: redact(message, secrets),
    ...(expected === undefined ? {} : { expected: redact(expected, secrets) }),
    ...(received === undefined ? {} : { received: redact(received, secrets) }),
    ...(fix === undefined ? {} : { fix }),
    exchanges: [...(exchanges ?? []).slice(0, 3).map((exchange) => excerpt(exchange, secrets)), ...(evidence ?? []).slice(0, 3).map((text) => redact(text, secrets))],
  };
}
