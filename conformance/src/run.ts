// runConformance(options) -> Report: the whole run, in process, for the CLI and for
// tests. Preflight, then the checks phase by phase (main, exhaust, passive), then the
// report. It never throws for what the service does; only for a bug in the runner.
import type { Check } from './check.ts';
import { CHECKS } from './checks/index.ts';
import type { CheckContext } from './context.ts';
import { SandboxClock } from './clock.ts';
import { ContractValidator, DEFAULT_OPENAPI_PATH } from './contract.ts';
import { excerpt, Http, type KeyName, redact, UnreachableError } from './http.ts';
import { Shape } from './implementation/shape.ts';
import { resolveOptions, type ResolvedOptions, type RunOptions } from './options.ts';
import { CheckFailure, CheckSkip, PrerequisiteError, type Phase } from './outcome.ts';
import { windowFor } from './observe/rate-limit-headers.ts';
import { preflight } from './preflight.ts';
import { WebhookReceiver } from './receiver/server.ts';
import { aborted, buildReport } from './report/build.ts';
import type { AbortKind, CheckResult, Report } from './report/model.ts';
import { areaOf, isRequired, selectChecks } from './selection.ts';
import { World } from './world.ts';

export { TOOL, VERSION } from './report/build.ts';
const PHASES: readonly Phase[] = ['main', 'exhaust', 'clock', 'generated', 'passive'];

export type { Report, RunOptions };

export async function runConformance(input: RunOptions): Promise<Report> {
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
  const http = new Http({
    baseUrl: options.baseUrl,
    keys: { main: options.apiKey, second: options.secondKey, empty: options.emptyKey },
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

  const selected = selectChecks(CHECKS, options);
  progress({ type: 'start', total: selected.length, profile: options.profile, implementation: options.implementation.name, baseUrl: options.baseUrl, ...(options.fuzz > 0 ? { generated: { count: options.fuzz, seed: options.seed } } : {}) });

  let abort: { kind: AbortKind; message: string } | undefined;
  try {
    abort = await preflight(http, keys, options, shape);
  } catch (error) {
    abort = { kind: 'internal', message: `preflight failed: ${error instanceof Error ? error.message : String(error)}` };
  }
  if (abort) return aborted(options, startedAt, abort.kind, abort.message, http.log.length);

  const clock = new SandboxClock(http, shape, options.now);
  try {
    await clock.detect(keys, options.clock && options.profile !== 'mock' && options.profile !== 'production');
  } catch (error) {
    if (error instanceof UnreachableError) return aborted(options, startedAt, 'unreachable', `the service stopped answering: ${error.message}`, http.log.length);
    throw error;
  }
  // Windows are moved over instead of waited out, on the keys that have a clock.
  http.pacer.skip = (key, ms) => clock.moveOver(key as KeyName, ms / 1000 + 1);
  progress({ type: 'note', message: clock.reason ? `no sandbox clock: ${clock.reason}; windows are waited out` : `sandbox clock on ${keys.filter((key) => clock.has(key)).join(', ')}: windows are moved over, not waited out` });

  let receiver: WebhookReceiver | undefined;
  if (options.receiver && options.signingSecret && webhooksReachable(options)) {
    try {
      receiver = await WebhookReceiver.start({ ...options.receiver, ...(options.receiver.publicUrl ? { publicUrl: options.receiver.publicUrl } : {}), secret: options.signingSecret, now: options.now, clockMoved: (from, to) => clock.movedBetween('main', from, to) });
    } catch (error) {
      return aborted(options, startedAt, 'usage', `cannot start the webhook receiver on ${options.receiver.host}:${options.receiver.port}: ${error instanceof Error ? error.message : String(error)}`, http.log.length);
    }
  }

  const world = new World({ http, keys, shape, receiver, options, now: options.now, sleep: options.sleep });
  const shared = new Map<string, Promise<unknown>>();

  const makeContext = (check: Check): CheckContext => ({
    checkId: check.id,
    profile: options.profile,
    contract: options.profile === 'contract',
    sandbox: options.profile !== 'production',
    shape,
    options,
    http,
    world,
    receiver,
    validator,
    clock,
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
    sleep: options.sleep,
  });

  const results = new Map<string, CheckResult>();
  try {
    const stateful = options.profile !== 'mock' && selected.some((check) => check.profiles.includes(options.profile) && check.phase !== 'passive');
    if (stateful) {
      try {
        await world.kickoff();
      } catch (error) {
        if (error instanceof UnreachableError) return aborted(options, startedAt, 'unreachable', `the service stopped answering: ${error.message}`, http.log.length);
        progress({ type: 'note', message: `the run's jobs could not all be started: ${error instanceof Error ? error.message : String(error)}` });
      }
    }
    const runLane = async (lane: Check[]) => {
      for (const check of lane) {
        progress({ type: 'check-start', id: check.id, title: check.title });
        const result = await runOne(check, makeContext(check), options, receiver);
        results.set(check.id, result);
        progress({ type: 'check-end', result });
      }
    };
    for (const phase of PHASES) {
      const checks = selected.filter((c) => (c.phase ?? 'main') === phase);
      // Rate-limited request checks and job checks wait on different things: overlap them.
      // The clock checks of the main key and those of the keys without jobs move different accounts' time.
      const lanes = phase === 'main' || phase === 'clock' ? [checks.filter((c) => c.lane === 'requests'), checks.filter((c) => c.lane !== 'requests')] : [checks];
      await Promise.all(lanes.map(runLane));
    }
  } finally {
    await receiver?.close();
  }

  const ordered = selected.map((check) => results.get(check.id)).filter((r): r is CheckResult => r !== undefined);
  return buildReport(options, startedAt, ordered, http.log.length, receiver?.deliveries().length ?? 0);
}

async function runOne(check: Check, ctx: CheckContext, options: ResolvedOptions, receiver: WebhookReceiver | undefined): Promise<CheckResult> {
  const started = options.now();
  const base: Omit<CheckResult, 'outcome' | 'durationMs'> = {
    id: check.id,
    title: check.title,
    area: areaOf(check),
    clauses: [...check.clauses],
    decisions: [...(check.decisions ?? [])],
    phase: check.phase ?? 'main',
    required: isRequired(check, options),
  };
  const done = (rest: Pick<CheckResult, 'outcome'> & Partial<CheckResult>): CheckResult => ({ ...base, ...rest, durationMs: options.now() - started });
  const secrets = [...ctx.http.secrets, ...(options.signingSecret ? [options.signingSecret] : [])];

  if (!check.profiles.includes(options.profile)) return done({ outcome: 'not_applicable', reason: `not part of the ${options.profile} profile` });
  const unmet = unmetNeed(check, ctx, receiver);
  if (unmet) return done({ outcome: 'skipped', reason: unmet });

  try {
    await withTimeout(check.run(ctx), checkTimeoutMs(options, check), check.id);
    return done({ outcome: 'passed' });
  } catch (error) {
    if (error instanceof CheckFailure) {
      const { clause, message, expected, received, fix, exchanges, evidence } = error.detail;
      return done({
        outcome: 'failed',
        failure: {
          clause,
          message: redact(message, secrets),
          ...(expected === undefined ? {} : { expected: redact(expected, secrets) }),
          ...(received === undefined ? {} : { received: redact(received, secrets) }),
          ...(fix === undefined ? {} : { fix }),
          exchanges: [...(exchanges ?? []).slice(0, 3).map((exchange) => excerpt(exchange, secrets)), ...(evidence ?? []).slice(0, 3).map((text) => redact(text, secrets))],
        },
      });
    }
    if (error instanceof CheckSkip) return done({ outcome: error.outcome, reason: error.message });
    if (error instanceof PrerequisiteError) return done({ outcome: 'skipped', reason: `prerequisite: ${error.message}` });
    const message = error instanceof UnreachableError ? `the service stopped answering: ${error.message}` : `the check could not complete: ${error instanceof Error ? error.message : String(error)}`;
    return done({ outcome: 'failed', failure: { clause: check.clauses[0] ?? check.decisions?.[0] ?? '', message, exchanges: [] } });
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
      if (ctx.options.receiver === false) return 'the webhook receiver is turned off (--no-receiver)';
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

function checkTimeoutMs(options: ResolvedOptions, check: Check): number {
  const base = (options.jobTimeoutSeconds * 2 + options.webhookRetryTimeoutSeconds + options.maxRateLimitWaitSeconds + 120) * 1000;
  // Generated requests are paced by the limits: without a sandbox clock, 10 creates a minute.
  return check.phase === 'generated' ? base + options.fuzz * 6_000 : base;
}

async function withTimeout<T>(work: Promise<T>, ms: number, id: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${id} did not finish within ${Math.round(ms / 1000)} s`)), ms);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
