// runConformance(options) -> Report: the whole run, in process, for the CLI and for
// tests. Preflight, then the checks phase by phase (main, exhaust, passive), then the
// report. It never throws for what the service does; only for a bug in the runner.
import { createAvatarClient, type AvatarClient } from '../../client/src/index.ts';
import { CheckFailure, CheckSkip, type Check, type Phase } from './check.ts';
import { CHECKS } from './checks/index.ts';
import { CLAUSES, DECISIONS } from './clauses.ts';
import { PrerequisiteError, type CheckContext } from './context.ts';
import { ContractValidator, DEFAULT_OPENAPI_PATH } from './contract.ts';
import { excerpt, Http, type KeyName, redact, UnreachableError } from './http.ts';
import { resolveOptions, type ResolvedOptions, type RunOptions } from './options.ts';
import { preflight } from './preflight.ts';
import { WebhookReceiver } from './receiver/server.ts';
import { EXIT_CODES, type AbortKind, type CheckResult, type ClauseRow, type Report } from './report/model.ts';
import { World } from './world.ts';

export const TOOL = 'avatar-api-conformance';
export const VERSION = '1.0.0';
const PHASES: readonly Phase[] = ['main', 'exhaust', 'passive'];

export type { Report, RunOptions };

export async function runConformance(input: RunOptions): Promise<Report> {
  const options = resolveOptions(input);
  const startedAt = options.now();
  const progress = options.onProgress;
  let validator: ContractValidator;
  try {
    validator = ContractValidator.load(options.openapiPath ?? DEFAULT_OPENAPI_PATH);
  } catch (error) {
    return aborted(options, startedAt, 'usage', `cannot load the contract: ${error instanceof Error ? error.message : String(error)}`);
  }

  const keys: KeyName[] = ['main'];
  if (options.secondKey) keys.push('second');
  if (options.emptyKey) keys.push('empty');
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
  });

  const selected = selectChecks(CHECKS, options);
  progress({ type: 'start', total: selected.length, profile: options.profile, baseUrl: options.baseUrl });

  let abort: { kind: AbortKind; message: string } | undefined;
  try {
    abort = await preflight(http, keys, options.profile, options.baseUrl);
  } catch (error) {
    abort = { kind: 'internal', message: `preflight failed: ${error instanceof Error ? error.message : String(error)}` };
  }
  if (abort) return aborted(options, startedAt, abort.kind, abort.message, http.log.length);

  let receiver: WebhookReceiver | undefined;
  if (options.receiver && options.signingSecret && webhooksReachable(options)) {
    try {
      receiver = await WebhookReceiver.start({ ...options.receiver, ...(options.receiver.publicUrl ? { publicUrl: options.receiver.publicUrl } : {}), secret: options.signingSecret, now: options.now });
    } catch (error) {
      return aborted(options, startedAt, 'usage', `cannot start the webhook receiver on ${options.receiver.host}:${options.receiver.port}: ${error instanceof Error ? error.message : String(error)}`, http.log.length);
    }
  }

  const clients: Partial<Record<KeyName, AvatarClient>> = {};
  for (const key of keys) {
    const token = http.token(key);
    if (token) clients[key] = createAvatarClient({ baseUrl: options.baseUrl, apiKey: token, retry: false, fetch: http.fetchAdapter, sleep: options.sleep, now: options.now });
  }
  const world = new World({ http, clients, receiver, options, now: options.now });
  const shared = new Map<string, Promise<unknown>>();

  const makeContext = (check: Check): CheckContext => ({
    check,
    profile: options.profile,
    contract: options.profile === 'contract',
    sandbox: options.profile !== 'production',
    options,
    http,
    clients,
    world,
    receiver,
    validator,
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
      const lanes = phase === 'main' ? [checks.filter((c) => c.lane === 'requests'), checks.filter((c) => c.lane !== 'requests')] : [checks];
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
    await withTimeout(check.run(ctx), checkTimeoutMs(options), check.id);
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
    if (need === 'fail-trigger' && !ctx.options.failMarker) return 'needs a way to make a job fail (--fail-marker)';
    if (need === 'receiver' && !receiver) {
      if (!ctx.options.signingSecret) return 'needs --signing-secret to verify webhooks';
      if (ctx.options.receiver === false) return 'the webhook receiver is turned off (--no-receiver)';
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

function checkTimeoutMs(options: ResolvedOptions): number {
  return (options.jobTimeoutSeconds * 2 + options.webhookRetryTimeoutSeconds + options.maxRateLimitWaitSeconds + 120) * 1000;
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

const SEVERITY = { failed: 4, skipped: 3, passed: 2, not_applicable: 1 } as const;

export function clauseMatrix(results: readonly CheckResult[]): ClauseRow[] {
  const byId = new Map(results.map((result) => [result.id, result]));
  return CLAUSES.map((clause) => {
    const checks = CHECKS.filter((check) => (check.clauses as readonly string[]).includes(clause.id)).map((check) => check.id);
    const outcomes = checks.flatMap((id) => {
      const result = byId.get(id);
      return result ? [result.outcome] : [];
    });
    let outcome: ClauseRow['outcome'];
    if (checks.length === 0) outcome = (clause.observe as readonly string[]).includes('B') ? 'uncovered' : 'client';
    else if (outcomes.length === 0) outcome = 'not_applicable';
    else outcome = outcomes.reduce((worst, next) => (SEVERITY[next] > SEVERITY[worst] ? next : worst));
    return {
      id: clause.id,
      sections: clause.sections,
      observe: [...clause.observe],
      rule: clause.rule,
      checks,
      outcome,
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
    baseUrl: options.baseUrl,
    startedAt: new Date(startedAt).toISOString(),
    finishedAt: new Date(finishedAt).toISOString(),
    durationMs: finishedAt - startedAt,
  };
}

function buildReport(options: ResolvedOptions, startedAt: number, results: CheckResult[], requests: number, deliveries: number): Report {
  const count = (outcome: CheckResult['outcome']) => results.filter((r) => r.outcome === outcome).length;
  const requiredNotRun = results.filter((r) => r.required && r.outcome === 'skipped').length;
  const failed = count('failed');
  const verdict = failed === 0 && requiredNotRun === 0 ? 'pass' : 'fail';
  return {
    ...timing(options, startedAt),
    verdict,
    exitCode: EXIT_CODES[verdict],
    counts: { passed: count('passed'), failed, skipped: count('skipped'), notApplicable: count('not_applicable'), requiredNotRun },
    results,
    clauses: clauseMatrix(results),
    requests,
    deliveries,
  };
}

function aborted(options: ResolvedOptions, startedAt: number, kind: AbortKind, message: string, requests = 0): Report {
  return {
    ...timing(options, startedAt),
    verdict: 'aborted',
    exitCode: EXIT_CODES[kind],
    abort: { kind, message },
    counts: { passed: 0, failed: 0, skipped: 0, notApplicable: 0, requiredNotRun: 0 },
    results: [],
    clauses: clauseMatrix([]),
    requests,
    deliveries: 0,
  };
}
