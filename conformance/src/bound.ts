// The bound of a run and the limit of each check, worked out before the first request
// from the checks selected, the implementation profile's timings (how long a job of each
// kind and a webhook attempt take at most, its retry schedule, whether it has a sandbox
// clock) and the options that override them (--job-timeout, --webhook-retry-timeout, the
// windows of the expected limits, --fuzz). The run keeps it: each check runs under its
// own deadline and the whole run under the bound (run.ts), so an implementation that
// never sends, never answers or answers late costs a run this long at most, and the
// report says which wait ended where.
//
// Two figures, made of the same allowances, in seconds:
//   a check   its limit: a request at its timeout, two rate-limit windows, a step for its
//             prompt requests and its judging, and the waits it declares (`waits` on the
//             check: webhooks awaited, sleeps, the day of requests it sends). Alone, a
//             check may meet the worst of each.
//   the run   what a correct implementation with those timings needs, end to end:
//             setup (a step each for preflight and the clock's detection); the run's
//             shared jobs (a window for their creates, an avatar then its video at the
//             longest their kinds take, the last poll, and the first retry awaited after
//             them: its latest moment and a delivery); then for each phase its longest
//             lane (two windows, unless passive, and for each check that will run a lane
//             step and its declared waits); and the teardown.
// The run counts no request at its timeout: a request that takes it fails its check
// (the verdict is then FAIL whatever else runs), and a service whose every answer is slow
// is not a correct one; the bound then stops the run and the checks not reached are
// reported not run. A check may start before the shared jobs are settled, and await
// them: its deadline is its limit counted from when it starts or from when the shared
// jobs must be settled, whichever is later.
import type { Allowances, Check } from './check.ts';
import { firstRetryLatestSeconds, type ResolvedOptions } from './options.ts';
import type { Phase } from './outcome.ts';

export type { Allowances };

/** Preflight and the clock's detection each send a few requests: one lane step each. */
const SETUP_STEPS = 2;
/** Writing the reports and closing the receiver, which the runner bounds itself. */
const TEARDOWN_SECONDS = 5;
/** A check's prompt requests and its judging, in its own limit (most checks take well under a second). */
const CHECK_STEP_SECONDS = 2;
/**
 * The same in the run's bound, where the steps of a lane add up: a check's few requests
 * and its judging took 5 ms or less each against this project's server, 20 ms under two
 * busy loops on its two cores; a lane of 25 such checks is then allowed 2.5 s.
 */
const LANE_STEP_SECONDS = 0.1;
/** A move of the sandbox clock over a window: one prompt request (a few ms against this project's server). */
const CLOCK_MOVE_SECONDS = 1;
/**
 * One more of many requests sent back to back (a day's limit spent, 16 at once): 0.6 ms
 * each against this project's server on its embedded store (10,600 in 6.4 s), about 2 ms
 * with the machine busy. The checks count the most a broken service may take (twice a
 * day's requests), a correct one takes half: 1.2 ms each is 2.4 ms of a correct run's.
 */
const EACH_REQUEST_SECONDS = 0.0012;
/** Passive checks judge what was recorded, without a request; the contract validator may take a while over thousands of exchanges. */
const PASSIVE_SECONDS = 30;
/** The same in the run's bound, for each passive check: each core one judged 11,000 exchanges in 0.1 s at most. */
const PASSIVE_LANE_SECONDS = 0.5;
/** Rate-limit windows a check (and each lane of a phase) is allowed to get past besides its declared waits. */
const WINDOWS_PER_CHECK = 2;
/** The run's shared jobs: an avatar, then a video made from it. */
const SHARED_CHAIN = ['avatar', 'avatar_video'] as const;
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
  const shortest = options.windowSeconds[0] ?? 60;
  const delivery = options.webhookRetryTimeoutSeconds;
  return {
    options,
    clock,
    request: options.requestTimeoutMs / 1000,
    // A window moved over is one prompt request; one waited out is the window and its reset's margin.
    window: clock ? CLOCK_MOVE_SECONDS : shortest + 1,
    job: (kind) => options.jobSeconds[kind],
    delivery,
    retry: firstRetryLatestSeconds(options) + 1 + delivery,
    each: EACH_REQUEST_SECONDS,
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
  // What the run counts of a check's waits: its requests answered as a correct service
  // answers them, not each at its timeout.
  const run: Allowances = { ...a, request: LANE_STEP_SECONDS };
  const setupSeconds = Math.ceil(SETUP_STEPS * LANE_STEP_SECONDS + 1);
  const sharedSeconds = stateful ? Math.ceil(sharedJobsSeconds(run)) : 0;
  // A check of another profile, or one that needs the clock in a run without it, ends at once.
  const runs = (check: Check) => check.profiles.includes(options.profile) && (clock || !(check.needs ?? []).includes('clock'));
  let phases = 0;
  for (const phase of PHASES) {
    const inPhase = selected.filter((check) => (check.phase ?? 'main') === phase && runs(check));
    // The main and clock phases run two lanes at once (run.ts): the longer one counts.
    const lanes = phase === 'main' || phase === 'clock' ? [inPhase.filter((c) => c.lane === 'requests'), inPhase.filter((c) => c.lane !== 'requests')] : [inPhase];
    phases += Math.max(0, ...lanes.map((lane) => laneSeconds(lane, phase, run)));
  }
  const planned = Math.ceil(setupSeconds + sharedSeconds + phases + TEARDOWN_SECONDS);
  const max = options.maxRunSeconds;
  const capped = max !== undefined && max < planned;
  const seconds = capped ? max : planned;
  // A check alone may be allowed more than the run counts for it, never past the run's end.
  for (const id of Object.keys(checks)) checks[id] = Math.min(checks[id]!, seconds);
  return { seconds, clock, setupSeconds, sharedSeconds, checks, ...(capped ? { cappedBy: 'max-run-seconds' as const } : {}) };
}

/**
 * By when the run's shared jobs are settled, after setup: their creates within a
 * window; the avatar at the longest an avatar takes; then, at once, the video made from
 * it with the poll that sees its end, and the retry of the avatar's delivery, which was
 * answered 500 (its first attempt a delivery late, the retry at its latest moment by the
 * schedule and a delivery late): the longer of the two.
 */
export function sharedJobsSeconds(a: Allowances): number {
  const [first, then] = SHARED_CHAIN;
  // The video's webhook wakes its poll (world.ts): its end is read a delivery after it, if not sooner.
  const read = a.options.receiver === false || !a.options.signingSecret ? a.options.pollMaxDelayMs / 1000 : Math.min(a.options.pollMaxDelayMs / 1000, a.delivery);
  return a.window + a.job(first) + Math.max(a.job(then) + read, a.delivery + a.retry);
}

/** A lane of a phase in the run's bound: its windows (none when passive), and a step and the declared waits of each check. */
export function laneSeconds(lane: readonly Check[], phase: Phase, a: Allowances): number {
  if (lane.length === 0) return 0;
  // Passive checks send nothing: no window to wait, only what was recorded to judge.
  const passive = phase === 'passive';
  const step = passive ? PASSIVE_LANE_SECONDS : LANE_STEP_SECONDS;
  return (passive ? 0 : WINDOWS_PER_CHECK * a.window) + lane.reduce((sum, check) => sum + step + (check.waits?.(a) ?? 0), 0);
}

/**
 * When the checks must stop for the run to keep its bound: the bound less the teardown
 * (closing the receiver, writing the reports, the exit's flush), which comes after them.
 */
export function checksEndSeconds(bound: Pick<Bound, 'seconds'>): number {
  return Math.max(1, bound.seconds - TEARDOWN_SECONDS);
}

/**
 * The bound stated before the first request: with the sandbox clock where the
 * implementation profile names one and the run may use it, since that is what the profile
 * says the implementation has. Whether the keys have it is known once the run asks
 * (run.ts); when they do not, the run says so and is bound anew without it, waiting
 * windows out.
 */
export function statedBound(selected: readonly Check[], options: ResolvedOptions, clockPossible: boolean, stateful: boolean): Bound {
  return planBound(selected, options, clockPossible, stateful);
}
