// Throughput on a server whose built-in engine does no work
// (ENGINE_AVATAR_MS=0): jobs completed per second draining a queued backlog, the time
// from create to ready one job at a time, and live webhook deliveries with their lag.
import { loadConfig } from '../../../server/src/config.ts';
import { SERVER_BASE_ENV, bearer, postJson, startBenchServer, waitFor, type Context } from '../harness.ts';
import { pacedPosts } from '../load.ts';
import type { JobsSection, JobsStore, WebhooksSection, WebhooksStore } from '../model.ts';
import type { BenchReceiver } from '../receiver.ts';
import { summarize } from '../stats.ts';
import { SEED_INPUT, STORE_LABEL } from '../stores.ts';

const BACKLOG_TIMEOUT_MS = 300_000;
const ONE_JOB_TIMEOUT_MS = 10_000;
const WEBHOOKS_TIMEOUT_MS = 180_000;

/** The dispatcher settings a server started with `env` runs with, read through the server's own config. */
export function dispatcherSettings(env: Record<string, string>): Record<string, string> {
  const { webhooks } = loadConfig({ ...SERVER_BASE_ENV, ...env });
  return {
    WEBHOOK_CONCURRENCY: String(webhooks.concurrency),
    WEBHOOK_DESTINATION_CONCURRENCY: String(webhooks.perDestination),
    WEBHOOK_POLL_MS: String(webhooks.pollMs),
    WEBHOOK_TIMEOUT_MS: String(webhooks.timeoutMs),
    WEBHOOK_MAX_ATTEMPTS: String(webhooks.maxAttempts),
  };
}

export async function jobsPhase(ctx: Context, receiver: BenchReceiver, want: { jobs: boolean; webhooks: boolean }): Promise<{ jobs?: JobsSection; webhooks?: WebhooksSection }> {
  const { sizes } = ctx;
  const jobs: JobsStore[] = [];
  const hooks: WebhooksStore[] = [];
  const { worker } = loadConfig(SERVER_BASE_ENV);
  for (const kind of ctx.options.stores) {
    const store = await ctx.store(kind);
    const backlog = await store.createOwner({ name: 'Bench backlog' });
    const single = await store.createOwner({ name: 'Bench one at a time' });
    const hooked = await store.createOwner({ name: 'Bench webhooks' });
    if (want.jobs) {
      ctx.log(`jobs: ${STORE_LABEL[kind]}: ${sizes.backlogJobs.toLocaleString('en-US')} queued jobs, then the server starts`);
      await store.seedQueuedJobs(backlog, sizes.backlogJobs);
    }
    const proc = await startBenchServer(`server-${kind}-jobs`, store);
    try {
      if (want.jobs) {
        const done = await waitFor(
          `jobs: the ${kind} backlog`,
          async () => {
            const p = await store.jobProgress(backlog);
            return p.terminal >= p.total ? p : undefined;
          },
          BACKLOG_TIMEOUT_MS,
        );
        const seconds = (done.maxCompletedAt! - done.minCompletedAt!) / 1000;
        const perSecond = seconds > 0 ? (done.terminal - 1) / seconds : Number.NaN;
        ctx.log(`jobs: ${kind}: backlog of ${done.terminal} done in ${seconds.toFixed(2)} s: ${Math.round(perSecond)} jobs/s`);

        ctx.log(`jobs: ${kind}: ${sizes.latencyJobs} jobs one at a time`);
        const createToReady: number[] = [];
        const postToWebhook: number[] = [];
        receiver.reset();
        for (let i = 0; i < sizes.latencyJobs; i++) {
          const sent = performance.timeOrigin + performance.now();
          const res = await postJson(`${proc.url}/v1/avatars`, single.apiKey, { ...SEED_INPUT, name: `Bench single ${i}`, webhook_url: receiver.url });
          if (res.status !== 202) throw new Error(`jobs: POST /v1/avatars answered ${res.status}: ${JSON.stringify(res.body).slice(0, 300)}`);
          const delivery = await receiver.waitForResource(String(res.body.id), ONE_JOB_TIMEOUT_MS);
          createToReady.push(delivery.terminalAt - delivery.acceptedAt);
          postToWebhook.push(delivery.receivedAt - sent);
        }
        jobs.push({
          store: kind,
          backlog: { jobs: done.terminal, seconds, perSecond, workerConcurrency: worker.concurrency },
          createToReady: summarize(createToReady),
          postToWebhook: summarize(postToWebhook),
        });
      }

      if (want.webhooks) {
        ctx.log(`webhooks: ${kind}: ${sizes.webhookJobs.toLocaleString('en-US')} jobs with a webhook_url through the API at ${sizes.webhookRate}/s`);
        receiver.reset();
        const sent = await pacedPosts({
          url: `${proc.url}/v1/avatars`,
          headers: { ...bearer(hooked.apiKey), 'Content-Type': 'application/json' },
          body: JSON.stringify({ ...SEED_INPUT, name: 'Bench webhook', webhook_url: receiver.url }),
          rate: sizes.webhookRate,
          count: sizes.webhookJobs,
          maxSeconds: (sizes.webhookJobs / sizes.webhookRate) * 2 + 30,
        });
        const accepted = sent.statuses[202] ?? 0;
        await receiver.waitForCount(accepted, WEBHOOKS_TIMEOUT_MS).catch((error: Error) => ctx.log(`webhooks: ${error.message}`));
        const got = receiver.deliveries;
        const first = Math.min(...got.map((d) => d.receivedAt));
        const last = Math.max(...got.map((d) => d.receivedAt));
        const seconds = (last - first) / 1000;
        hooks.push({
          store: kind,
          jobs: accepted,
          delivered: receiver.distinct(),
          seconds,
          perSecond: seconds > 0 ? (receiver.distinct() - 1) / seconds : Number.NaN,
          lag: summarize(got.map((d) => d.receivedAt - d.terminalAt)),
          createToReady: summarize(got.map((d) => d.terminalAt - d.acceptedAt)),
        });
        ctx.log(`webhooks: ${kind}: ${receiver.distinct()} delivered in ${seconds.toFixed(2)} s`);
      }
    } finally {
      await proc.stop();
      await ctx.drop(store);
    }
  }
  return {
    ...(want.jobs ? { jobs: { engineAvatarMs: Number(SERVER_BASE_ENV.ENGINE_AVATAR_MS), stores: jobs } } : {}),
    ...(want.webhooks ? { webhooks: { dispatcher: dispatcherSettings({}), rate: sizes.webhookRate, stores: hooks } } : {}),
  };
}
