// Sends generated requests as a fast-check property: each one is judged as it comes
// back (oracle.ts), and the first that fails is shrunk to the smallest request that
// still fails, by sending the smaller ones too. The seed is printed and replayable, and
// shrinking has a budget, because each step is a real request paced by the rate limits.
import fc from 'fast-check';
import type { CheckContext } from '../context.ts';
import type { Exchange } from '../http.ts';
import { fail } from '../outcome.ts';
import { counted } from '../report/text.ts';
import { judge, type Judgement } from './oracle.ts';
import { type GeneratedRequest, show } from './requests.ts';

/** Requests a shrink may send after the first failure. */
export const SHRINK_BUDGET = 150;

export interface GeneratedRun {
  sent: number;
  /** Answered 429 even after the window was moved over or waited out. */
  unjudged: number;
  byExpectation: Record<string, number>;
}

export async function sendGenerated(ctx: CheckContext, requests: fc.Arbitrary<GeneratedRequest>, count: number, seed: number): Promise<GeneratedRun> {
  const run: GeneratedRun = { sent: 0, unjudged: 0, byExpectation: {} };
  const failures = new Map<string, { judgement: Judgement; exchange: Exchange }>();
  let failedAt: number | undefined;
  // Not the service's fault: a network failure or a runner bug stops the run as it is.
  let fatal: unknown;
  const property = fc.asyncProperty(requests, async (request) => {
    if (fatal !== undefined || (failedAt !== undefined && run.sent >= failedAt + SHRINK_BUDGET)) return true;
    run.sent++;
    run.byExpectation[request.expect] = (run.byExpectation[request.expect] ?? 0) + 1;
    let exchange: Exchange;
    let judgement: Judgement | undefined;
    try {
      exchange = await sendPaced(ctx, request);
      // A window that could not be got past is the pacing's business, not this request's.
      if (exchange.status === 429) {
        run.unjudged++;
        return true;
      }
      judgement = judge(ctx, request, exchange);
    } catch (error) {
      fatal = error;
      return true;
    }
    if (!judgement) return true;
    failedAt ??= run.sent;
    failures.set(show(request), { judgement, exchange });
    return false;
  });
  const details = await fc.check(property, { numRuns: count, seed, verbose: 0 });
  // A failure found before the service stopped answering (or the runner broke) is still reported.
  if (fatal !== undefined && !details.failed) throw fatal;
  if (!details.failed) return run;
  const request = details.counterexample?.[0];
  const found = request ? failures.get(show(request)) : undefined;
  if (!request || !found) throw details.errorInstance ?? new Error(`the generated run failed without a recorded answer (seed ${seed})`);
  const { judgement, exchange } = found;
  fail({
    ...judgement,
    message: `${judgement.message} — shrunk in ${counted(details.numShrinks, 'step')} from run ${details.numRuns}; seed ${seed} (--seed ${seed} replays it)`,
    exchanges: [exchange],
    evidence: [`the shrunk request:\n${show(request, 600)}`],
  });
}

/**
 * Sends one request on the key without credits. The pacer plans within the windows the
 * headers show, but a request can still meet a 429 where a longer window (the day) runs
 * out first; the HTTP layer moves the key's sandbox clock over it, or waits it out when it
 * is short, and sends the request again.
 */
function sendPaced(ctx: CheckContext, request: GeneratedRequest): Promise<Exchange> {
  return ctx.http.send({
    key: 'empty',
    method: request.method,
    path: request.path,
    ...(request.body === undefined ? {} : { body: request.body }),
    ...(request.contentType === undefined ? {} : { headers: { 'content-type': request.contentType } }),
    // The key without credits: a conforming service creates nothing, so a create sent
    // twice after a reset cannot make two jobs (and one that was accepted fails anyway).
    resend: true,
    note: `generated (${request.expect}${request.member ? `: ${request.member} ${request.rule}` : ''})`,
  });
}
