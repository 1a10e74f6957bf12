// runReceiverConformance(options) -> Report: the runner plays the sender against one
// webhook receiver and judges it clause by clause, with the report, the verdict and the
// exit codes of a service run. The run states its bound before anything is sent (each
// delivery's time limit times the deliveries each check makes) and keeps it: a check
// past its share is failed, and whatever is still open is closed at the end.
import { WEBHOOK_DELIVERY } from '../../../contract/numbers.ts';
import { WEBHOOK_TOLERANCE_SECONDS } from '../../../contract/webhookSignature.ts';
import { redact } from '../http.ts';
import { CONTRACT_PROFILE, type ImplementationProfile } from '../implementation/profile.ts';
import type { ProgressEvent } from '../options.ts';
import { CheckFailure, CheckSkip, type CheckResult } from '../outcome.ts';
import { clauseMatrix, countsOf, reportedFailure, TOOL, VERSION, verdictOf } from '../report/build.ts';
import { EXIT_CODES, type AbortKind, type Report } from '../report/model.ts';
import type { ReceiverCheck, ReceiverContext } from './check.ts';
import { EventFactory } from './events.ts';
import { RECEIVER_CHECKS } from './index.ts';
import { resendCommand } from '../report/reproduce.ts';
import { type Answer, type Delivery, formatSeconds, Sender } from './sender.ts';

/**
 * The time a delivery is given to be answered, by default the contract's sender's limit
 * per attempt (ND-DELIVERY, info.x-webhook-delivery): a receiver slower than that fails
 * real deliveries.
 */
export const DEFAULT_DELIVERY_TIMEOUT_SECONDS = WEBHOOK_DELIVERY.timeoutSeconds;
/** Room per check for the runner's own work between deliveries. */
const CHECK_OVERHEAD_MS = 2_000;

export interface ReceiverRunOptions {
  /** The receiver's URL, as the sender would be told it (webhook_url). */
  url: string;
  /** The signing secret the receiver verifies with. */
  signingSecret: string;
  /** The sender the receiver was written for: header names, signature prefix, envelope. Default this project's contract. */
  implementation?: ImplementationProfile;
  /** The receiver's tolerance for a timestamp's age (the source leaves it "not shown"; 300 s is the common choice). */
  toleranceSeconds?: number;
  /** How long each delivery waits for its answer. */
  timeoutSeconds?: number;
  /** Check IDs, clause IDs or decisions to run or leave out (`*` wildcards). */
  only?: string[];
  skip?: string[];
  /** Called once before anything is sent, with the plan and its bound. */
  onStart?: (plan: ReceiverPlan) => void;
  onProgress?: (event: ProgressEvent) => void;
  now?: () => number;
  /** Filled as deliveries go, for --report-har: each with the check that sent it and when. */
  sent?: { delivery: Delivery; answer: Answer; check: string; at: number }[];
}

export interface ReceiverPlan {
  url: string;
  implementation: string;
  checks: readonly ReceiverCheck[];
  deliveries: number;
  timeoutMs: number;
  /** The run ends within this, whatever the receiver does. */
  boundMs: number;
}

function matches(check: ReceiverCheck, pattern: string): boolean {
  const regex = new RegExp(`^${pattern.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`, 'i');
  return [check.id, 'receiver', ...check.clauses, ...(check.decisions ?? [])].some((name) => regex.test(name));
}

export function planReceiverRun(options: ReceiverRunOptions): ReceiverPlan {
  const only = options.only ?? [];
  const skip = options.skip ?? [];
  const checks = RECEIVER_CHECKS.filter((check) => (only.length === 0 || only.some((p) => matches(check, p))) && !skip.some((p) => matches(check, p)));
  const timeoutMs = (options.timeoutSeconds ?? DEFAULT_DELIVERY_TIMEOUT_SECONDS) * 1000;
  const deliveries = checks.reduce((sum, check) => sum + check.deliveries, 0);
  return {
    url: options.url,
    implementation: (options.implementation ?? CONTRACT_PROFILE).name,
    checks,
    deliveries,
    timeoutMs,
    boundMs: checks.reduce((sum, check) => sum + checkBudgetMs(check, timeoutMs), 0),
  };
}

function checkBudgetMs(check: ReceiverCheck, timeoutMs: number): number {
  return check.deliveries * timeoutMs + CHECK_OVERHEAD_MS;
}

export async function runReceiverConformance(options: ReceiverRunOptions): Promise<Report> {
  const now = options.now ?? Date.now;
  const startedAt = now();
  const progress = options.onProgress ?? (() => undefined);
  const profile = options.implementation ?? CONTRACT_PROFILE;
  const plan = planReceiverRun(options);
  const secrets = [options.signingSecret];
  const base = { startedAt, now, url: options.url, implementation: profile.name, boundMs: plan.boundMs };

  let url: URL;
  try {
    url = new URL(options.url);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('not http or https');
  } catch {
    return receiverReport(base, [], 0, { kind: 'usage', message: `the receiver URL is not an http(s) URL: ${options.url}` });
  }
  if (!options.signingSecret) return receiverReport(base, [], 0, { kind: 'usage', message: 'a signing secret is needed to sign the deliveries' });

  options.onStart?.(plan);
  const sender = new Sender({ url, secret: options.signingSecret, profile, timeoutMs: plan.timeoutMs, now });
  const events = new EventFactory({ profile, now, webhookUrl: url.toString() });
  const toleranceSeconds = options.toleranceSeconds ?? WEBHOOK_TOLERANCE_SECONDS;
  const results: CheckResult[] = [];
  try {
    for (const check of plan.checks) {
      progress({ type: 'check-start', id: check.id, title: check.title });
      // The bound was stated from each check's declared deliveries: a check never sends
      // more, nor anything once its share of the time is over.
      let sent = 0;
      const started = now();
      const budgetMs = checkBudgetMs(check, plan.timeoutMs);
      const send = (delivery: Delivery) => {
        if (++sent > check.deliveries) throw new Error(`${check.id} tried a delivery beyond the ${check.deliveries} it declares`);
        if (now() - started > budgetMs) throw new Error(`${check.id} is past its share of the run's bound`);
        const at = now();
        return sender.send(delivery).then((answer) => {
          options.sent?.push({ delivery, answer, check: check.id, at });
          return answer;
        });
      };
      const ctx: ReceiverContext = {
        sender,
        events,
        profile,
        toleranceSeconds,
        deliver: async (event, sign) => {
          const delivery = sender.delivery(event, sign);
          return { delivery, answer: await send(delivery) };
        },
        resend: async (delivery, label) => {
          const again = { ...delivery, label };
          return { delivery: again, answer: await send(again) };
        },
        note: (message) => progress({ type: 'note', message: `${check.id}: ${redact(message, secrets)}` }),
      };
      const first = sender.exchanges.length;
      const result = await runOne(check, ctx, budgetMs, now, secrets);
      // A failure is shown again by the deliveries its check sent, the last ones first to go.
      const sentByCheck = sender.exchanges.slice(first).slice(-3);
      if (result.failure && sentByCheck.length > 0) result.failure.reproduction = sentByCheck.map(({ delivery }) => resendCommand(url.toString(), delivery.headers, delivery.body.toString('utf8'), secrets));
      const slow = slowAnswers(sender.exchanges.slice(first).map((exchange) => ({ label: exchange.delivery.label, answer: exchange.answer })), plan.timeoutMs);
      if (slow.length > 0) result.warnings = slow;
      // Nothing ever answered and the connection was refused: the URL is wrong or the
      // receiver is not running, which is a diagnosis of the run, not of a clause.
      const last = sender.exchanges.at(-1)?.answer;
      if (!sender.everAnswered && last?.kind === 'no-answer' && last.refused) {
        return receiverReport(base, [], sender.exchanges.length, { kind: 'unreachable', message: `cannot reach ${url.toString()}: ${last.reason}` });
      }
      results.push(result);
      progress({ type: 'check-end', result });
    }
  } finally {
    sender.close();
  }
  return receiverReport(base, results, sender.exchanges.length);
}

/** Answers that came, but late: more than half the time a delivery is given, near where a sender gives up. */
function slowAnswers(exchanges: { label: string; answer: Answer }[], timeoutMs: number): string[] {
  return exchanges
    .filter(({ answer }) => answer.kind === 'answered' && answer.ms > timeoutMs / 2)
    .map(({ label, answer }) => `slow: ${label} was answered after ${formatSeconds(answer.ms)}, more than half the ${formatSeconds(timeoutMs)} a delivery is given; a sender that gives up sooner counts it as failed and sends it again (acknowledge first, then do the work)`);
}

async function runOne(check: ReceiverCheck, ctx: ReceiverContext, budgetMs: number, now: () => number, secrets: string[]): Promise<CheckResult> {
  const started = now();
  const done = (rest: Pick<CheckResult, 'outcome'> & Partial<CheckResult>): CheckResult => ({
    id: check.id,
    title: check.title,
    area: 'receiver',
    clauses: [...check.clauses],
    decisions: [...(check.decisions ?? [])],
    phase: 'main',
    required: true,
    optional: false,
    ...rest,
    durationMs: now() - started,
  });
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${check.id} did not finish within ${formatSeconds(budgetMs)}, its share of the run's bound`)), budgetMs);
  });
  try {
    await Promise.race([check.run(ctx), deadline]);
    return done({ outcome: 'passed' });
  } catch (error) {
    if (error instanceof CheckFailure) return done({ outcome: 'failed', failure: reportedFailure(error.detail, secrets) });
    if (error instanceof CheckSkip) return done({ outcome: error.outcome, reason: error.message });
    const message = `the check could not complete: ${error instanceof Error ? error.message : String(error)}`;
    return done({ outcome: 'failed', failure: { clause: check.clauses[0] ?? '', message: redact(message, secrets), exchanges: [] } });
  } finally {
    clearTimeout(timer);
  }
}

function receiverReport(
  base: { startedAt: number; now: () => number; url: string; implementation: string; boundMs: number },
  results: CheckResult[],
  deliveries: number,
  abort?: { kind: AbortKind; message: string },
): Report {
  const finishedAt = base.now();
  const counts = countsOf(results);
  const verdict = abort ? 'aborted' : verdictOf(counts);
  return {
    tool: TOOL,
    version: VERSION,
    subject: 'receiver',
    boundSeconds: Math.ceil(base.boundMs / 1000),
    // The source's rules, as in a core run: the receiver's clauses hold for every implementation.
    profile: 'core',
    implementation: base.implementation,
    baseUrl: base.url,
    startedAt: new Date(base.startedAt).toISOString(),
    finishedAt: new Date(finishedAt).toISOString(),
    durationMs: finishedAt - base.startedAt,
    verdict,
    exitCode: abort ? EXIT_CODES[abort.kind] : EXIT_CODES[verdict as 'pass' | 'fail'],
    ...(abort ? { abort } : {}),
    counts,
    results,
    // Only the clauses a receiver is held to: the service's are another run's.
    clauses: clauseMatrix(results, RECEIVER_CHECKS).filter((row) => row.checks.length > 0),
    requests: deliveries,
    deliveries,
  };
}
