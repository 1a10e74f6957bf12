// runConformance(options) -> Report: the whole run, in process, for the CLI and for
// tests. Preflight, then the checks phase by phase (main, exhaust, passive), then the
// report. It never throws for what the service does; only for a bug in the runner.
// It states its bound before the first request (bound.ts) and keeps it: each check runs
// under its own limit, the whole run under the bound, and nothing it started is left
// waiting once it returns.
import { type Bound, checksEndSeconds, planBound, statedBound } from './bound.ts';
import { describeBudget, liveRefusal, overBudget, plannedBudget, spentFrom } from './budget.ts';
import type { Check } from './check.ts';
import { CHECKS } from './checks/index.ts';
import type { CheckContext } from './context.ts';
import { SandboxClock } from './clock.ts';
import { ContractValidator, DEFAULT_OPENAPI_PATH } from './contract.ts';
import { type Deadline, deadline, LimitReached, reached, RUN_SCOPE, sleepWithin, within } from './deadline.ts';
import { checkScope, type Exchange, Http, type KeyName, redact, UnreachableError } from './http.ts';
import { Shape } from './implementation/shape.ts';
import { resolveOptions, retryScheduleOf, type ResolvedOptions, type RunOptions } from './options.ts';
import { CheckFailure, CheckSkip, failedOutcome, type FailureReport, PrerequisiteError, type Phase } from './outcome.ts';
import { windowFor } from './observe/rate-limit-headers.ts';
import { timeline } from './observe/timeline.ts';
import { preflight } from './preflight.ts';
import { budgetWarning, clockWarning, photoWarning, profileWarnings, receiverWarning } from './setup.ts';
import { WebhookReceiver } from './receiver/server.ts';
import { aborted, buildReport, reportedFailure } from './report/build.ts';
import type { RunTraffic } from './report/har.ts';
import { citedDeliveries, reproduction } from './report/reproduce.ts';
import type { AbortKind, CheckResult, Report } from './report/model.ts';
import { areaOf, isOptional, isRequired, selectChecks, startsJobs } from './selection.ts';
import { CheckStalls, StallMeter } from './stalls.ts';
import { World } from './world.ts';

export { TOOL, VERSION } from './report/build.ts';
const PHASES: readonly Phase[] = ['main', 'exhaust', 'clock', 'generated', 'passive'];
/**
 * How long a check whose limit came is given to end by its own waits, which name what
 * they waited for, before it is stopped without them: its rejection takes a few turns
 * of the event loop to come through.
 */
const HARD_STOP_GRACE_MS = 50;
/** The receiver is closed at the end of a run, but the run does not wait on it longer. */
const RECEIVER_CLOSE_MS = 2000;

export type { Report, RunOptions };

/**
 * `traffic`, when given, is filled as the run goes with what it sent and received (the
 * HAR file's entries): whatever way the run ends, it holds every exchange made.
 */
export async function runConformance(input: RunOptions, traffic?: { -readonly [K in keyof RunTraffic]: RunTraffic[K] }): Promise<Report> {
  const options = resolveOptions(input);
  const startedAt = options.now();
  const progress = options.onProgress;
  if (!options.implementation.isContract && (options.profile === 'contract' || options.profile === 'mock')) {
    return aborted(options, startedAt, 'usage', `the ${options.profile} profile judges this project's contract; ${options.implementation.name} is for the core and production profiles`);
  }
  let validator: ContractValidator;
  try {
    validator = ContractValidator.load(options.openapiPath ?? DEFAULT_OPENAPI_PATH);
  } catch (error) {
    return aborted(options, startedAt, 'usage', `cannot load the contract: ${error instanceof Error ? error.message : String(error)}`);
  }

  const keys: KeyName[] = ['main'];
  if (options.secondKey) keys.push('second');
  if (options.emptyKey) keys.push('empty');
  const shape = new Shape(options.implementation);
  const selected = selectChecks(CHECKS, options);
  const stateful = startsJobs(selected, options);
  const clockPossible = options.clock && options.profile !== 'mock' && options.profile !== 'production' && shape.clockAdvance(1) !== undefined;
  let bound = statedBound(selected, options, clockPossible, stateful);
  const planned = plannedBudget(selected, options, shape);
  const budget: NonNullable<Report['budget']> = {
    planned: { avatars: planned.creates.avatar, videos: planned.creates.avatar_video, requests: planned.requests, ...(planned.credits === undefined ? {} : { credits: planned.credits }) },
    stated: describeBudget(planned),
    ...(options.maxCredits === undefined ? {} : { maxCredits: options.maxCredits }),
  };
  // Refused before the first request: a run that may spend more than it was allowed, or
  // that would spend real money on a live key without being told how much it may.
  const refusal = overBudget(planned, options.maxCredits) ?? (options.profile === 'production' && options.maxCredits === undefined ? liveRefusal(planned, 'the production profile runs on a live key') : undefined);
  if (refusal) return { ...aborted(options, startedAt, 'usage', refusal), budget };
  // From here on every wait of the run, its checks' included, ends by the bound at the latest.
  const run = deadline(RUN_SCOPE, checksEndSeconds(bound) * 1000, undefined, bound.seconds);
  const unbound = new Http({
    baseUrl: options.baseUrl,
    // The workspace and owner keys are used by credits.workspace-charged alone: they are
    // not among the run's keys, so no other check (nor the choice of a validation key) sends with them.
    keys: { main: options.apiKey, second: options.secondKey, empty: options.emptyKey, workspace: options.workspaceKey, owner: options.ownerKey },
    requestTimeoutMs: options.requestTimeoutMs,
    maxRateLimitWaitSeconds: options.maxRateLimitWaitSeconds,
    now: options.now,
    sleep: options.sleep,
    onWait: (message) => progress({ type: 'note', message }),
    // A stateless mock answers example headers that never change: nothing to plan by.
    pacing: options.profile !== 'mock',
    credential: (token) => shape.credential(token),
    bucketOf: (method, path) => validator.match(method, path)?.bucket,
    windowFor: (bucket, limit) => windowFor(options, bucket, limit),
    windowsOf: (json) => shape.generationWindows(json),
  });
  const http = unbound.within(run.signal);
  if (traffic) Object.assign(traffic, { baseUrl: options.baseUrl, exchanges: unbound.log, secrets: [...unbound.secrets, ...(options.signingSecret ? [options.signingSecret] : [])] });
  const sleep = (ms: number, signal?: AbortSignal) => sleepWithin(options.sleep, ms, signal ? AbortSignal.any([run.signal, signal]) : run.signal, 'pausing between polls');
  // The runner's own stalls, left out of the intervals it judges and the waits it states.
  const stalls = new StallMeter(options.now);

  /** What the run was badly set up with: said as soon as known, and first in every report. */
  const setup: string[] = [];
  /** Set once the report is made: a warning known later (a job that ended after the run) is not said. */
  let reported = false;
  const warn = (message: string | undefined) => {
    if (message === undefined || reported || setup.includes(message)) return;
    setup.push(message);
    progress({ type: 'setup-warning', message });
  };
  progress({ type: 'start', total: selected.length, profile: options.profile, implementation: options.implementation.name, baseUrl: options.baseUrl, boundSeconds: bound.seconds, budget: budget.stated, ...(options.fuzz > 0 ? { generated: { count: options.fuzz, seed: options.seed } } : {}) });
  try {
    const report = await runChecks();
    reported = true;
    return setup.length > 0 ? { ...report, setup: [...setup] } : report;
  } finally {
    // Whatever is still waiting (a check stopped at its limit, a poll of a job) ends now.
    run.dispose();
    stalls.stop();
  }

  async function runChecks(): Promise<Report> {
    // Reached when the run's timer fired, or when its checks' end came first (a loaded
    // machine fires the timer late): either way checks were ended by the bound.
    let endedByBound = false;
    const reportBound = (reached = run.signal.aborted || endedByBound) => ({ ...bound, reached });
    /** The report of a run whose bound came before any check could start. */
    const unstarted = (error: LimitReached) => buildReport(options, startedAt, selected.map((check) => notReached(check, options, error.message)), http.log.length, 0, reportBound(true));

    let abort: { kind: AbortKind; message: string } | undefined;
    try {
      abort = await preflight(http, keys, options, shape);
    } catch (error) {
      if (error instanceof LimitReached) return unstarted(error);
      abort = { kind: 'internal', message: `preflight failed: ${error instanceof Error ? error.message : String(error)}` };
    }
    if (abort) return aborted(options, startedAt, abort.kind, abort.message, http.log.length, reportBound());
    const mainAccount = http.log.find((exchange) => exchange.key === 'main' && exchange.path === '/v1/me' && exchange.status === 200);
    const live = shape.mode(mainAccount) === 'live' && options.maxCredits === undefined ? liveRefusal(planned, 'GET /v1/me says --api-key is a live key') : undefined;
    if (live) return { ...aborted(options, startedAt, 'usage', live, http.log.length, reportBound()), budget };
    warn(budgetWarning(shape.balance(mainAccount)?.available, planned));
    profileWarnings(options.implementation, mainAccount).forEach(warn);

    const clock = new SandboxClock(http, shape, options.now);
    try {
      await clock.detect(keys, options.clock && options.profile !== 'mock' && options.profile !== 'production');
    } catch (error) {
      if (error instanceof UnreachableError) return aborted(options, startedAt, 'unreachable', `the service stopped answering: ${error.message}`, http.log.length, reportBound());
      if (error instanceof LimitReached) return unstarted(error);
      throw error;
    }
    warn(clockWarning(shape.clockAdvance(1) !== undefined, options.clock && options.profile !== 'mock' && options.profile !== 'production', clock.reason));
    // Windows are moved over instead of waited out, on the keys that have a clock.
    http.pacer.skip = (key, ms) => clock.moveOver(key as KeyName, ms / 1000 + 1);
    progress({ type: 'note', message: clock.reason ? `no sandbox clock: ${clock.reason}; windows are waited out` : `sandbox clock on ${keys.filter((key) => clock.has(key)).join(', ')}: windows are moved over, not waited out` });

    let receiver: WebhookReceiver | undefined;
    if (options.receiver && options.signingSecret && webhooksReachable(options)) {
      try {
        receiver = await WebhookReceiver.start({ ...options.receiver, ...(options.receiver.publicUrl ? { publicUrl: options.receiver.publicUrl } : {}), secret: options.signingSecret, now: options.now, clockMoved: (from, to) => clock.movedBetween('main', from, to), stalls });
      } catch (error) {
        return aborted(options, startedAt, 'usage', `cannot start the webhook receiver on ${options.receiver.host}:${options.receiver.port}: ${error instanceof Error ? error.message : String(error)}`, http.log.length, reportBound());
      }
    }

    // The limits of the checks as this run will go: with the clock only where every key has it.
    const plan = planBound(selected, options, clockPossible && keys.every((key) => clock.has(key)), stateful);
    // The bound stated counted on the clock the implementation profile names; keys without
    // it wait windows out, and the run is bound anew for that, saying so.
    if (plan.seconds > bound.seconds) {
      progress({ type: 'note', message: `the implementation profile names a sandbox clock that ${keys.filter((key) => !clock.has(key)).join(', ')} lacks: the run is bound anew, waiting windows out, and ends within ${plan.seconds} s (--no-clock states that bound from the start)` });
      bound = plan;
      run.extend(checksEndSeconds(plan) * 1000, plan.seconds);
    }
    // The shared jobs are settled by then, or given up: a check that awaits them may wait until then.
    const sharedBy = startedAt + (plan.setupSeconds + plan.sharedSeconds) * 1000;

    const world = new World({ http, keys, shape, receiver, options, now: options.now, sleep });
    const shared = new Map<string, Promise<unknown>>();

    const makeContext = (check: Check, limit: Deadline, checkStalls: CheckStalls): CheckContext => ({
      checkId: check.id,
      profile: options.profile,
      contract: options.profile === 'contract',
      sandbox: options.profile !== 'production',
      shape,
      options,
      http: http.within(limit.signal),
      world,
      receiver: receiver?.within(limit.signal),
      validator,
      clock,
      stalls: checkStalls,
      once: <T>(name: string, work: () => Promise<T>) => {
        let pending = shared.get(name) as Promise<T> | undefined;
        if (!pending) {
          pending = work();
          pending.catch(() => undefined);
          shared.set(name, pending);
        }
        return pending;
      },
      hasKey: (key) => keys.includes(key),
      validationKey: () => pickValidationKey(http, keys, options),
      note: (message) => progress({ type: 'note', message: `${check.id}: ${message}` }),
      now: options.now,
      deadline: { signal: limit.signal, limitSeconds: Math.ceil(limit.limitMs / 1000) },
      sleep: (ms) => sleepWithin(options.sleep, ms, limit.signal, `pausing ${(ms / 1000).toFixed(1)} s`),
    });

    /**
     * What the shared jobs tell of the setup is said as soon as they tell it, while the
     * checks run: the photo avatar's end, and, once every job that named the receiver has
     * ended and a first attempt had its time to come, whether any webhook reached it.
     */
    const watchSharedJobs = () => {
      const photo = world.jobs.find((job) => job.label === 'photo-avatar');
      const sayPhoto = () => warn(photoWarning(photo, options.photoUrl));
      photo?.settled.then(sayPhoto, sayPhoto);
      const hooked = world.jobs.filter((job) => job.webhookUrl !== undefined);
      if (!receiver || hooked.length === 0) return;
      void Promise.allSettled(hooked.map((job) => job.settled))
        .then(() => sleep(options.webhookRetryTimeoutSeconds * 1000))
        .then(() => warn(receiverWarning(receiver.publicBase, receiver.deliveries().length, hooked.filter((job) => job.ended !== undefined).length)))
        .catch(() => undefined);
    };
    const results = new Map<string, CheckResult>();
    let beforeClockPhase: { at: number; answers: Map<KeyName, Exchange | undefined> } | undefined;
    try {
      if (stateful) {
        try {
          await within(world.kickoff(), run.signal, "starting the run's jobs");
        } catch (error) {
          if (error instanceof UnreachableError) return aborted(options, startedAt, 'unreachable', `the service stopped answering: ${error.message}`, http.log.length, reportBound());
          progress({ type: 'note', message: `the run's jobs could not all be started: ${error instanceof Error ? error.message : String(error)}` });
        }
        watchSharedJobs();
      }
      const runLane = async (lane: Check[]) => {
        for (const check of lane) {
          progress({ type: 'check-start', id: check.id, title: check.title });
          let result: CheckResult;
          // Its own limit, from its start or from when the shared jobs are settled, whichever
          // is later; never past the moment the run's checks must end, and then it is the
          // run's bound that ends it, and says so (the run's own timer may fire late on a
          // loaded machine, after a check started in the last moments).
          const own = Math.max(options.now(), sharedBy) - options.now() + plan.checks[check.id]! * 1000;
          const untilRunEnds = startedAt + checksEndSeconds(bound) * 1000 - options.now() + HARD_STOP_GRACE_MS;
          if (run.signal.aborted || untilRunEnds <= 0) {
            endedByBound = true;
            const why = run.signal.aborted ? reached(run.signal, 'before it could start') : new LimitReached(RUN_SCOPE, bound.seconds, 'before it could start');
            result = notReached(check, options, why.message);
          } else {
            const cut = own > untilRunEnds;
            const limit = cut ? deadline(RUN_SCOPE, untilRunEnds, run.signal, bound.seconds) : deadline(check.id, own, run.signal);
            const checkStalls = new CheckStalls(stalls);
            const from = options.now();
            try {
              result = await runOne(check, makeContext(check, limit, checkStalls), options, receiver);
              if (cut && limit.signal.aborted) endedByBound = true;
            } finally {
              limit.dispose();
            }
            // Whatever its outcome, a check judged while the runner was held says so: a
            // pass that needed its stalls left out, or a failure seen through them.
            const load = checkStalls.underLoad(from, options.now());
            if (load) result = { ...result, warnings: [...(result.warnings ?? []), load] };
          }
          results.set(check.id, result);
          progress({ type: 'check-end', result });
        }
      };
      for (const phase of PHASES) {
        const checks = selected.filter((c) => (c.phase ?? 'main') === phase);
        // The clock checks may move an account's time past the end of its credit period,
        // which renews its balance: what was spent is read up to here as well.
        if (phase === 'clock' && stateful && checks.length > 0 && !run.signal.aborted) beforeClockPhase = await balancesNow(world, keys, options.now);
        // Rate-limited request checks and job checks wait on different things: overlap them.
        // The clock checks of the main key and those of the keys without jobs move different accounts' time.
        const lanes = phase === 'main' || phase === 'clock' ? [checks.filter((c) => c.lane === 'requests'), checks.filter((c) => c.lane !== 'requests')] : [checks];
        await Promise.all(lanes.map(runLane));
      }
    } finally {
      if (receiver && traffic) Object.assign(traffic, { deliveries: receiver.deliveries(), receiverBase: receiver.publicBase });
      if (receiver) {
        const closing = deadline('closing the receiver', RECEIVER_CLOSE_MS);
        await within(receiver.close(), closing.signal, 'closing the receiver').catch(() => undefined);
        closing.dispose();
      }
    }

    warn(photoWarning(world.jobs.find((job) => job.label === 'photo-avatar'), options.photoUrl));
    warn(receiverWarning(receiver?.publicBase, receiver?.deliveries().length ?? 0, world.jobs.filter((job) => job.webhookUrl !== undefined && job.ended !== undefined).length));
    const ordered = selected.map((check) => results.get(check.id)).filter((r): r is CheckResult => r !== undefined);
    const spent = stateful ? await spentByBalances(world, keys, shape, mainAccount, clock, beforeClockPhase, options.now) : undefined;
    const observations = timeline({
      startedAt,
      log: http.log,
      deliveries: receiver?.deliveries() ?? [],
      eventType: (delivery) => shape.eventType(delivery),
      jobs: world.jobs,
      schedule: retryScheduleOf(options),
    });
    return buildReport(options, startedAt, ordered, http.log.length, receiver?.deliveries().length ?? 0, reportBound(), { budget: { ...budget, ...(spent ? { spent } : {}) }, observations });
  }
}

/** GET /v1/me of each key with credits, now (a read, which costs nothing). */
async function balancesNow(world: World, keys: readonly KeyName[], now: () => number): Promise<{ at: number; answers: Map<KeyName, Exchange | undefined> }> {
  const at = now();
  const answers = new Map<KeyName, Exchange | undefined>();
  for (const key of keys.filter((k) => k !== 'empty')) answers.set(key, await world.me(key).catch(() => undefined));
  return { at, answers };
}

/**
 * What the run spent by the balances of its keys with credits: before its jobs, and by one
 * more GET /v1/me at its end. A key whose sandbox clock the clock checks moved may have
 * crossed into a new credit period, whose balance starts afresh: for it the balance
 * before those checks is read instead, and the report says so. Undefined where the
 * implementation shows no balance.
 */
async function spentByBalances(world: World, keys: readonly KeyName[], shape: Shape, preflightMain: Exchange | undefined, clock: SandboxClock, beforeClockPhase: { at: number; answers: Map<KeyName, Exchange | undefined> } | undefined, now: () => number) {
  const end = await balancesNow(world, keys, now);
  const pairs = [];
  for (const key of keys.filter((k) => k !== 'empty')) {
    const before = world.snapshots.get(`${key}:before`) ?? (key === 'main' ? preflightMain : undefined);
    if (!before || !shape.balance(before)) continue;
    const moved = beforeClockPhase !== undefined && clock.accountTime(key, end.at).latest - clock.accountTime(key, beforeClockPhase.at).earliest > end.at - beforeClockPhase.at;
    pairs.push({ key, before, after: moved ? beforeClockPhase.answers.get(key) : end.answers.get(key), beforeClockPhase: moved });
  }
  return spentFrom(shape, pairs);
}

/** A check the run did not get to: not run, which fails the verdict when it is required. */
function notReached(check: Check, options: ResolvedOptions, why: string): CheckResult {
  const inProfile = check.profiles.includes(options.profile);
  return {
    ...resultOf(check, options),
    outcome: inProfile ? 'skipped' : 'not_applicable',
    reason: inProfile ? `not reached: ${why}` : `not part of the ${options.profile} profile`,
    durationMs: 0,
  };
}

/** What every result of a check says of it, however it ended. */
function resultOf(check: Check, options: ResolvedOptions): Omit<CheckResult, 'outcome' | 'durationMs'> {
  return {
    id: check.id,
    title: check.title,
    area: areaOf(check),
    clauses: [...check.clauses],
    decisions: [...(check.decisions ?? [])],
    phase: check.phase ?? 'main',
    required: isRequired(check, options),
    optional: isOptional(check, options),
  };
}

async function runOne(check: Check, ctx: CheckContext, options: ResolvedOptions, receiver: WebhookReceiver | undefined): Promise<CheckResult> {
  const started = options.now();
  const base = { ...resultOf(check, options), limitSeconds: ctx.deadline.limitSeconds };
  const done = (rest: Pick<CheckResult, 'outcome'> & Partial<CheckResult>): CheckResult => ({ ...base, ...rest, durationMs: options.now() - started });
  const secrets = [...ctx.http.secrets, ...(options.signingSecret ? [options.signingSecret] : [])];
  /** A failure with the commands that show it again: the exchanges it cites, else its check's last, and the deliveries it names. */
  const reproducible = (failure: FailureReport, cited: readonly Exchange[], texts: (string | undefined)[]): FailureReport => {
    const ownLast = ctx.http.log.findLast((exchange) => exchange.check === check.id);
    const commands = reproduction(cited, ownLast, citedDeliveries(texts, receiver?.deliveries() ?? []), ctx.http.baseUrl, secrets);
    return commands.length > 0 ? { ...failure, reproduction: commands } : failure;
  };

  if (!check.profiles.includes(options.profile)) return done({ outcome: 'not_applicable', reason: `not part of the ${options.profile} profile` });
  const unmet = unmetNeed(check, ctx, receiver);
  if (unmet) return done({ outcome: 'skipped', reason: unmet });

  const signal = ctx.deadline.signal;
  // The hard stop: a check that ignores its deadline in some wait still ends at its limit.
  let stop = () => undefined as void;
  const stopped = new Promise<never>((_, reject) => {
    stop = () => setTimeout(() => reject(reached(signal, 'in a wait that does not take the deadline')), HARD_STOP_GRACE_MS);
    signal.addEventListener('abort', stop, { once: true });
  });
  stopped.catch(() => undefined);
  try {
    await Promise.race([checkScope.run(check.id, () => check.run(ctx)), stopped]);
    return done({ outcome: 'passed' });
  } catch (error) {
    // Not run to its end: reported as not run, with the limit and the wait it was in.
    if (error instanceof LimitReached) return done({ outcome: 'skipped', reason: error.scope === check.id ? `reached its limit of ${error.limitSeconds} s${error.waitingFor ? `, ${error.waitingFor}` : ''}` : error.message });
    if (error instanceof CheckFailure) return done({ outcome: failedOutcome(base.optional), failure: reproducible(reportedFailure(error.detail, secrets), error.detail.exchanges ?? [], [error.detail.message, error.detail.received, ...(error.detail.evidence ?? [])]) });
    if (error instanceof CheckSkip) return done({ outcome: error.outcome, reason: error.message });
    if (error instanceof PrerequisiteError) return done({ outcome: 'skipped', reason: `prerequisite: ${error.message}` });
    const message = error instanceof UnreachableError ? `the service stopped answering: ${error.message}` : `the check could not complete: ${error instanceof Error ? error.message : String(error)}`;
    return done({ outcome: failedOutcome(base.optional), failure: reproducible({ clause: check.clauses[0] ?? check.decisions?.[0] ?? '', message: redact(message, secrets), exchanges: [] }, [], []) });
  } finally {
    signal.removeEventListener('abort', stop);
  }
}

function unmetNeed(check: Check, ctx: CheckContext, receiver: WebhookReceiver | undefined): string | undefined {
  for (const need of check.needs ?? []) {
    if (need === 'second-key' && !ctx.hasKey('second')) return 'needs --second-key (a key of another account)';
    if (need === 'empty-key' && !ctx.hasKey('empty')) return 'needs --empty-key (a key of an account without credits)';
    if (need === 'clock' && !ctx.clock.has('main')) return `needs a sandbox clock: ${ctx.clock.reason ?? 'the main key has none'}`;
    if (need === 'fail-trigger' && !ctx.shape.canFail()) return 'needs a way to make a job fail (failure in the implementation profile, or --fail-marker)';
    if (need === 'receiver' && !receiver) {
      // Turned off, the receiver would not run with a secret either: say the cause, not a consequence.
      if (ctx.options.receiver === false) return 'the webhook receiver is turned off (receiver: false)';
      if (!ctx.options.signingSecret) return 'needs --signing-secret to verify webhooks';
      return 'webhooks cannot reach the runner: the production profile needs --receiver-public-url https://… (a public https address that forwards to the receiver)';
    }
  }
  return undefined;
}

/** Production refuses http and private hosts, so the receiver must be reached through a public https URL. */
function webhooksReachable(options: ResolvedOptions): boolean {
  if (options.profile !== 'production') return true;
  return options.receiver !== false && (options.receiver.publicUrl ?? '').startsWith('https://');
}

function pickValidationKey(http: Http, keys: KeyName[], options: ResolvedOptions): KeyName {
  // Keys whose accounts pay nothing for refused requests; the main key's window is
  // kept for the run's jobs unless it is the only key.
  const pool = keys.filter((key) => key !== 'main');
  const candidates: KeyName[] = pool.length > 0 && options.profile !== 'mock' ? pool : ['main'];
  let best = candidates[0] ?? 'main';
  let bestScore = -Infinity;
  for (const key of candidates) {
    const gate = http.pacer.gate(key, 'generation');
    const score = gate.capacity() > 0 ? gate.capacity() : -gate.waitMs();
    if (score > bestScore) {
      best = key;
      bestScore = score;
    }
  }
  return best;
}
