// judgeTraffic(traffic) -> Report: every proxy check over what the proxy saw, with the
// report, verdict and exit codes of a service run. Judging sends nothing: it ends as
// soon as the checks have read the record.
import { CONTRACT_LIMITS, CONTRACT_WINDOW_SECONDS } from '../options.ts';
import { redact } from '../http.ts';
import type { Shape } from '../implementation/shape.ts';
import { windowFor } from '../observe/rate-limit-headers.ts';
import { CheckFailure, CheckSkip, type CheckResult } from '../outcome.ts';
import { clauseMatrix, countsOf, reportedFailure, TOOL, VERSION, verdictOf } from '../report/build.ts';
import { EXIT_CODES, type Report } from '../report/model.ts';
import type { ProxyCheck, ProxyContext } from './check.ts';
import { PROXY_CHECKS } from './index.ts';
import type { Traffic } from './traffic.ts';

/** The contract's limits and their windows (the source's, section 8): what a RateLimit-Limit value can mean. */
const SOURCE_LIMITS = { expectedLimits: { generation: CONTRACT_LIMITS.generation, read: CONTRACT_LIMITS.read }, windowSeconds: CONTRACT_WINDOW_SECONDS };

export interface JudgeOptions {
  traffic: Traffic;
  shape: Shape;
  upstream: string;
  signingSecret?: string | undefined;
  startedAt: number;
  now?: () => number;
  /** Limits the implementation documents, when not the source's. */
  limits?: typeof SOURCE_LIMITS;
  checks?: readonly ProxyCheck[];
}

export function judgeTraffic(options: JudgeOptions): Report {
  const now = options.now ?? Date.now;
  const limits = options.limits ?? SOURCE_LIMITS;
  const ctx: ProxyContext = {
    traffic: options.traffic,
    shape: options.shape,
    signingSecret: options.signingSecret || undefined,
    windowFor: (bucket, limit) => windowFor(limits, bucket, limit),
  };
  const secrets = [...options.traffic.tokens, ...(options.signingSecret ? [options.signingSecret] : [])];
  const results = (options.checks ?? PROXY_CHECKS).map((check) => judgeOne(check, ctx, secrets, now));
  const finishedAt = now();
  const counts = countsOf(results);
  // A run in which no check had traffic to judge proves nothing of either party: it fails,
  // as a service run fails when a required check never ran.
  const judged = counts.failed + counts.warned + counts.passed;
  const verdict = judged > 0 ? verdictOf(counts) : 'fail';
  return {
    tool: TOOL,
    version: VERSION,
    subject: 'proxy',
    // The source's rules, as in a core run: they bind every client and every service.
    profile: 'core',
    implementation: options.shape.profile.name,
    baseUrl: options.upstream,
    startedAt: new Date(options.startedAt).toISOString(),
    finishedAt: new Date(finishedAt).toISOString(),
    durationMs: finishedAt - options.startedAt,
    verdict,
    exitCode: EXIT_CODES[verdict],
    counts,
    results,
    clauses: clauseMatrix(results, options.checks ?? PROXY_CHECKS).filter((row) => row.checks.length > 0),
    requests: options.traffic.exchanges.length,
    deliveries: options.traffic.deliveries.length,
  };
}

function judgeOne(check: ProxyCheck, ctx: ProxyContext, secrets: string[], now: () => number): CheckResult {
  const started = now();
  const done = (rest: Pick<CheckResult, 'outcome'> & Partial<CheckResult>): CheckResult => ({
    id: check.id,
    title: check.title,
    area: check.party,
    clauses: [...check.clauses],
    decisions: [],
    phase: 'passive',
    required: true,
    optional: false,
    ...rest,
    durationMs: now() - started,
  });
  try {
    check.run(ctx);
    return done({ outcome: 'passed' });
  } catch (error) {
    if (error instanceof CheckFailure) return done({ outcome: 'failed', failure: reportedFailure(error.detail, secrets) });
    // Too little traffic to judge: said with the reason, never a failure.
    if (error instanceof CheckSkip) return done({ outcome: 'not_applicable', reason: redact(error.message, secrets) });
    const message = `the check could not complete: ${error instanceof Error ? error.message : String(error)}`;
    return done({ outcome: 'failed', failure: { clause: check.clauses[0] ?? '', message: redact(message, secrets), exchanges: [] } });
  }
}
