// The report of a run, as runConformance returns it and every reporter renders it.
import type { Observations } from '../observe/timeline.ts';
import type { CheckResult, Outcome, Profile } from '../outcome.ts';

export type { CheckResult, FailureReport } from '../outcome.ts';

export interface ClauseRow {
  id: string;
  sections: string;
  observe: string[];
  rule: string;
  checks: string[];
  /**
   * The worst outcome among its checks in this run; `uncovered` when it has none;
   * `not_proven` when its only checks that ran failed first on another of their clauses.
   */
  outcome: Outcome | 'not_proven' | 'uncovered' | 'client';
  /** How each check of this run came out for this clause: its outcome, or `not_proven` as above. */
  cells?: Record<string, Outcome | 'not_proven'>;
  /** Where the outcome is `not_proven`: the checks and the clause each failed on first. */
  stoppedBy?: { check: string; clause: string }[];
  provenBy?: string;
}

export interface Counts {
  passed: number;
  failed: number;
  warned: number;
  skipped: number;
  notApplicable: number;
  requiredNotRun: number;
}

export type AbortKind = 'usage' | 'unreachable' | 'rejected-key' | 'not-this-api' | 'internal';

export interface Report {
  tool: string;
  version: string;
  /**
   * What was judged: a service (absent, the default), a webhook receiver with the runner
   * as its sender, or the live traffic of a client and a service through the proxy.
   */
  subject?: 'receiver' | 'proxy';
  /** The longest the run could take, stated before it started (receiver runs). */
  boundSeconds?: number;
  profile: Profile;
  /** The implementation profile the run read the service through (its name). */
  implementation: string;
  baseUrl: string;
  startedAt: string;
  finishedAt: string;
  durationMs: number;
  verdict: 'pass' | 'fail' | 'aborted';
  exitCode: number;
  /** Set when the run could not start: a one-line diagnosis. */
  abort?: { kind: AbortKind; message: string };
  /** What the run was badly set up with (setup.ts): said first, since it explains failures below it. */
  setup?: string[];
  /**
   * `failed`: the failures that decide the verdict; `warned`: the optional checks that found
   * a flaw, shown but never deciding it; `requiredNotRun`: required checks among `skipped`.
   */
  counts: Counts;
  results: CheckResult[];
  clauses: ClauseRow[];
  requests: number;
  deliveries: number;
  /**
   * The bound the run stated before its first request (bound.ts), in seconds, and whether
   * it was reached (the checks not reached then are reported not run). Absent when the
   * run stopped before it worked one out (a usage error).
   */
  /**
   * What the run could spend, stated before its first request (budget.ts), the limit it
   * was given, and what it spent by the balances GET /v1/me showed before and after.
   */
  budget?: {
    planned: { avatars: number; videos: number; requests: number; credits?: number };
    stated: string;
    maxCredits?: number;
    spent?: { credits: number; from: 'used' | 'available'; keys: string[]; beforeClockMoves?: string[] };
  };
  /** What the run saw over time, for the HTML report's pictures (observe/timeline.ts). */
  observations?: Observations;
  bound?: { seconds: number; clock: boolean; setupSeconds: number; sharedSeconds: number; cappedBy?: 'max-run-seconds'; reached: boolean };
}

export const EXIT_CODES: Record<'pass' | 'fail' | AbortKind, number> = {
  pass: 0,
  fail: 1,
  usage: 2,
  unreachable: 3,
  'rejected-key': 4,
  'not-this-api': 5,
  internal: 6,
};
