// Waiting for the webhooks of the run's jobs, shared by the webhook checks so that a
// service that sends nothing costs the run one timeout, not one per check.
import type { CheckContext } from '../context.ts';
import type { Delivery } from '../receiver/server.ts';
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
    const timeout = ctx.options.webhookRetryTimeoutSeconds * 1000;
    return Promise.all(jobs.map(async (job) => ({ job, deliveries: await ctx.receiver!.waitFor(job.label, 1, timeout) })));
  });
}

/** The deliveries of the job whose receiver answered 500 first, once a retry came (or the wait ended). */
export async function retried(ctx: CheckContext): Promise<Arrival> {
  return ctx.once('webhook-retry', async () => {
    const job = await ctx.world.kickoffJob('prompt-avatar');
    await job.settled;
    if (!job.webhookUrl) skip('the prompt avatar was made without a webhook');
    const timeout = (firstRetryLatestSeconds(ctx.options) + 1) * 1000 + ctx.options.webhookRetryTimeoutSeconds * 1000;
    return { job, deliveries: await ctx.receiver!.waitFor(job.label, 2, timeout) };
  });
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
  const headers = ['x-service-event-id', 'x-service-timestamp', 'x-service-signature'].map((name) => `${name}: ${delivery.headers[name] ?? '(absent)'}`);
  return [`webhook #${delivery.seq} to ${delivery.label} (answered ${delivery.answered})`, ...headers, delivery.rawBody.slice(0, 400)].join('\n');
}
