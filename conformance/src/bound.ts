// The bound of a run and the limit of each check, worked out before the first request
// from the checks selected, the options (job and webhook timeouts, the request timeout,
// the windows of the expected limits, --fuzz) and the implementation profile (whether it
// names a sandbox clock, its webhook retry schedule). The run keeps it: each check runs
// under its own deadline and the whole run under the bound (run.ts), so an
// implementation that never sends, never answers or answers late costs a run this long
// at most, and the report says which wait ended where.
//
// The model, in seconds:
//   setup     preflight and the clock's detection: two steps of requests
//   shared    the run's own jobs, made once and awaited by many checks: their requests
//             and a window, an avatar then its video (two job timeouts), the last poll,
//             and a webhook retry awaited after them
//   a check   its limit: a request at its timeout, two rate-limit windows, a step for its
//             prompt requests and its judging, and the waits it declares (`waits` on the
//             check: webhooks awaited, sleeps, the day of requests it sends)
// A check may start before the shared jobs are settled, and await them: its deadline is
// its limit counted from when it starts or from when the shared jobs must be settled,
// whichever is later. The run is bound by setup + shared + teardown + for each phase its
// longest lane: a step and the declared waits of each check that will run (of the
// profile; needing a clock only where there is one), and once for the lane, unless it
// is passive, a request at its timeout and two windows. A check is allowed those alone, but a
// run whose every request takes the timeout, or that waits every window out, is not a
// correct one: the run's bound then stops it, and the checks not reached are reported
// not run.
import type { Allowances, Check } from './check.ts';
import { firstRetryLatestSeconds, type ResolvedOptions } from './options.ts';
import type { Phase } from './outcome.ts';

export type { Allowances };

/** Preflight and the clock's detection each send a few requests: one step each. */
const SETUP_STEPS = 2;
/** Writing the reports and closing the receiver, which the runner bounds itself. */
const TEARDOWN_SECONDS = 5;
/** A check's prompt requests and its judging (most checks take well under a second). */
const CHECK_STEP_SECONDS = 2;
/** Passive checks judge what was recorded, without a request; the contract validator may take a while over thousands of exchanges. */
const PASSIVE_SECONDS = 30;
/** Rate-limit windows a check (and each lane of a phase) is allowed to get past besides its declared waits. */
const WINDOWS_PER_CHECK = 2;
const PHASES: readonly Phase[] = ['main', 'exhaust', 'clock', 'generated', 'passive'];

export interface Bound {
  /** The whole run, from its first request to its reports. */
  seconds: number;
  /** Whether the sandbox clock was counted on to move windows over. */
  clock: boolean;
  setupSeconds: number;
  /** How long after setup the run's shared jobs and webhooks must be settled (0 when the run makes none). */
  sharedSeconds: number;
  /** Each selected check's own limit, counted from its start or from when the shared jobs are settled. */
  checks: Record<string, number>;
  /** Set when --max-run-seconds cut the bound below what the checks would take. */
  cappedBy?: 'max-run-seconds';
}

export function allowances(options: ResolvedOptions, clock: boolean): Allowances {
  const request = options.requestTimeoutMs / 1000;
  const shortest = options.windowSeconds[0] ?? 60;
  return {
    options,
    clock,
    request,
    // A move of the clock is one prompt request; a window waited out is the window and its reset's margin.
    window: clock ? CHECK_STEP_SECONDS : shortest + 1,
    retry: firstRetryLatestSeconds(options) + 1 + options.webhookRetryTimeoutSeconds,
    each: 0.02,
  };
}

/** A check's own limit in seconds: a request at its timeout, two windows, a step, and the waits it declares. */
export function checkLimitSeconds(check: Check, a: Allowances): number {
  const waits = check.waits?.(a) ?? 0;
  if ((check.phase ?? 'main') === 'passive') return Math.ceil(PASSIVE_SECONDS + waits);
  return Math.ceil(a.request + WINDOWS_PER_CHECK * a.window + CHECK_STEP_SECONDS + waits);
}

/**
 * The bound of a run of `selected`, with or without the clock. `stateful`: the run makes
 * its shared jobs (every profile but mock, when a check of it needs them).
 */
export function planBound(selected: readonly Check[], options: ResolvedOptions, clock: boolean, stateful: boolean): Bound {
  const a = allowances(options, clock);
  const checks = Object.fromEntries(selected.map((check) => [check.id, checkLimitSeconds(check, a)]));
  const setupSeconds = Math.ceil(SETUP_STEPS * a.request + 1);
  const sharedSeconds = stateful ? Math.ceil(a.request + a.window + 2 * options.jobTimeoutSeconds + options.pollMaxDelayMs / 1000 + a.retry) : 0;
  // A check of another profile, or one that needs the clock in a run without it, ends at once.
  const runs = (check: Check) => check.profiles.includes(options.profile) && (clock || !(check.needs ?? []).includes('clock'));
  const laneSeconds = (lane: readonly Check[], requests: boolean) =>
    lane.length === 0 ? 0 : (requests ? a.request + WINDOWS_PER_CHECK * a.window : 0) + lane.reduce((sum, check) => sum + CHECK_STEP_SECONDS + (check.waits?.(a) ?? 0), 0);
  let phases = 0;
  for (const phase of PHASES) {
    const inPhase = selected.filter((check) => (check.phase ?? 'main') === phase && runs(check));
    // The main and clock phases run two lanes at once (run.ts): the longer one counts.
    const lanes = phase === 'main' || phase === 'clock' ? [inPhase.filter((c) => c.lane === 'requests'), inPhase.filter((c) => c.lane !== 'requests')] : [inPhase];
    // Passive checks send nothing: no request to time out, no window to wait.
    phases += Math.max(0, ...lanes.map((lane) => laneSeconds(lane, phase !== 'passive')));
  }
  const planned = Math.ceil(setupSeconds + sharedSeconds + phases + TEARDOWN_SECONDS);
  const max = options.maxRunSeconds;
  const capped = max !== undefined && max < planned;
  return { seconds: capped ? max : planned, clock, setupSeconds, sharedSeconds, checks, ...(capped ? { cappedBy: 'max-run-seconds' as const } : {}) };
}

/**
 * When the checks must stop for the run to keep its bound: the bound less the teardown
 * (closing the receiver, writing the reports, the exit's flush), which comes after them.
 */
export function checksEndSeconds(bound: Pick<Bound, 'seconds'>): number {
  return Math.max(1, bound.seconds - TEARDOWN_SECONDS);
}

/**
 * The bound stated before the first request. Whether the implementation has the clock
 * its profile names is known only once it is asked; a run without it waits windows out,
 * one with it runs the checks that need it: the bound is the longer of the two.
 */
export function statedBound(selected: readonly Check[], options: ResolvedOptions, clockPossible: boolean, stateful: boolean): Bound {
  const without = planBound(selected, options, false, stateful);
  if (!clockPossible) return without;
  const withClock = planBound(selected, options, true, stateful);
  return withClock.seconds > without.seconds ? withClock : without;
}
