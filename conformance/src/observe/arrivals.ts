// Waiting for the webhooks of the run's jobs, shared by the webhook checks. Each attempt
// is awaited until the latest moment a correct sender makes it, by the implementation's
// timings: its first attempt a delivery after the job was seen to end, its first retry
// the schedule's latest first retry and a delivery after that attempt. The moment is the
// same for every check that awaits it, so a service that sends nothing costs the run one
// delivery's wait, not one per check; and a retry is not awaited at all once its first
// attempt is known never to have come.
import type { CheckContext } from '../context.ts';
import { type Delivery, STAMPED_HEADERS } from '../receiver/server.ts';
import type { Stalls } from '../stalls.ts';
import type { TrackedJob } from '../world.ts';
import { skip } from '../outcome.ts';
import { firstRetryLatestSeconds } from '../options.ts';

export interface Arrival {
  job: TrackedJob;
  deliveries: Delivery[];
}

/** Every job of the run that asked for a webhook and reached a terminal state, with what arrived. */
export async function arrivals(ctx: CheckContext): Promise<Arrival[]> {
  return ctx.once('webhook-arrivals', async () => {
    const jobs = (await ctx.world.allSettled()).filter((job) => job.webhookUrl && job.terminal);
    return Promise.all(jobs.map(async (job) => ({ job, deliveries: await attemptsDue(ctx, job, 1) })));
  });
}

/** The deliveries of the job whose receiver answered 500 first, once a retry came (or the wait ended). */
export async function retried(ctx: CheckContext): Promise<Arrival> {
  return ctx.once('webhook-retry', async () => {
    const job = await ctx.world.kickoffJob('prompt-avatar');
    await job.settled;
    if (!job.webhookUrl) skip('the prompt avatar was made without a webhook');
    return { job, deliveries: await attemptsDue(ctx, job, 2) };
  });
}

/**
 * The attempts of a settled job's webhook once it has `count` of them (1, or 2 for the
 * first retry), or once the latest moment a correct sender makes the last of them has
 * passed: each attempt a delivery after it is due (--webhook-retry-timeout, else the
 * profile's timings). Without a first attempt by its moment no retry is awaited.
 */
export async function attemptsDue(ctx: CheckContext, job: TrackedJob, count: 1 | 2): Promise<Delivery[]> {
  const receiver = ctx.receiver!;
  const deliveryMs = ctx.options.webhookRetryTimeoutSeconds * 1000;
  const until = (moment: number) => Math.max(0, moment - ctx.now());
  const first = await receiver.waitFor(job.label, 1, until((job.terminalAt ?? ctx.now()) + deliveryMs));
  if (count === 1 || first.length === 0) return first;
  return receiver.waitFor(job.label, 2, until(first[0]!.receivedAt + (firstRetryLatestSeconds(ctx.options) + 1) * 1000 + deliveryMs));
}

export function bodyOf(delivery: Delivery): Record<string, unknown> | undefined {
  const json = delivery.json;
  return typeof json === 'object' && json !== null && !Array.isArray(json) ? (json as Record<string, unknown>) : undefined;
}

export function dataObject(delivery: Delivery): Record<string, unknown> | undefined {
  const data = bodyOf(delivery)?.data;
  const object = typeof data === 'object' && data !== null ? (data as Record<string, unknown>).object : undefined;
  return typeof object === 'object' && object !== null && !Array.isArray(object) ? (object as Record<string, unknown>) : undefined;
}

export function describeDelivery(delivery: Delivery): string {
  const headers = STAMPED_HEADERS.map((name) => `${name}: ${delivery.headers[name] ?? '(absent)'}`);
  return [`webhook #${delivery.seq} to ${delivery.label} (answered ${delivery.answered})`, ...headers, delivery.rawBody.slice(0, 400)].join('\n');
}

/**
 * How long (ms) the runner was stalled or busy between a delivery's stamp and reading it,
 * looking back `lookbackMs` at most: how late it may have read it, and answered it. A
 * delivery without a stamp in whole seconds was read at once, as far as this can tell.
 */
export function heldBeforeReading(stalls: Stalls, delivery: Delivery, lookbackMs: number): number {
  const stampedAt = Number(delivery.headers['x-service-timestamp']) * 1000;
  if (!Number.isFinite(stampedAt)) return 0;
  return stalls.busyWithin(Math.max(stampedAt, delivery.receivedAt - lookbackMs), delivery.receivedAt);
}
