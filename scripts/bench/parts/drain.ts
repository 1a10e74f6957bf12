// A backlog of queued webhook events (outbox rows written straight
// into a fresh store) and the time the dispatcher takes to deliver them all to local
// receivers once the server starts.
import { watchCpu } from '../cpu.ts';
import { startBenchServer, waitFor, withProfile, type Context } from '../harness.ts';
import type { DrainSection, DrainStore } from '../model.ts';
import type { BenchReceiver } from '../receiver.ts';
import { STORE_LABEL, type BenchStore, type Owner } from '../stores.ts';
import { dispatcherSettings } from './jobs.ts';

const DRAIN_TIMEOUT_MS = 600_000;
/** Events of the (untimed) profiled drain: enough samples to see where the time goes. */
const PROFILED_EVENTS = 3_000;
const BOOKKEEPING_TIMEOUT_MS = 30_000;

/**
 * Receivers the backlog is spread over. The service gives one destination at most
 * WEBHOOK_DESTINATION_CONCURRENCY of its WEBHOOK_CONCURRENCY attempts (fairness between
 * customers), so a single receiver would measure that cap, not the service: four at the
 * defaults (4 x 8 = 32) let every attempt slot work, as a service with several customers does.
 */
export const DRAIN_DESTINATIONS = 4;

/** `count` pending events, spread evenly over `urls`. */
async function seedAcross(store: BenchStore, owner: Owner, count: number, urls: string[]): Promise<void> {
  for (const [i, url] of urls.entries()) {
    const share = Math.floor(count / urls.length) + (i < count % urls.length ? 1 : 0);
    await store.seedPendingEvents(owner, share, url, 'http://localhost:3000');
  }
}

export async function drainPhase(ctx: Context, receiver: BenchReceiver): Promise<DrainSection> {
  const { sizes } = ctx;
  const stores: DrainStore[] = [];
  for (const kind of ctx.options.stores) {
    const store = await ctx.store(kind);
    try {
      const owner = await store.createOwner({ name: 'Bench drain' });
      ctx.log(`drain: ${STORE_LABEL[kind]}: ${sizes.drainEvents.toLocaleString('en-US')} queued webhook events`);
      await seedAcross(store, owner, sizes.drainEvents, receiver.urls);
      receiver.reset();
      const spawned = performance.timeOrigin + performance.now();
      const proc = await startBenchServer(`server-${kind}-drain`, store);
      // CPU from here on, against the deliveries received from here on (start-up left out).
      const since = performance.timeOrigin + performance.now();
      const cpu = watchCpu(proc.pid);
      try {
        await receiver.waitForCount(sizes.drainEvents, DRAIN_TIMEOUT_MS).catch((error: Error) => ctx.log(`drain: ${error.message}`));
        const times = receiver.deliveries.map((d) => d.receivedAt);
        const first = Math.min(...times);
        const last = Math.max(...times);
        const seconds = (last - first) / 1000;
        const { seconds: cpuWall, ...cores } = cpu.stop();
        const deliveredSince = receiver.deliveries.filter((d) => d.receivedAt >= since).length;
        // Deliveries are marked in the store just after the receiver answers.
        const counts = await waitFor(
          'drain: bookkeeping',
          async () => {
            const c = await store.eventCounts(owner);
            return (c.pending ?? 0) === 0 ? c : undefined;
          },
          BOOKKEEPING_TIMEOUT_MS,
          100,
        ).catch(() => store.eventCounts(owner));
        stores.push({
          store: kind,
          events: sizes.drainEvents,
          delivered: receiver.distinct(),
          seconds,
          secondsFromSpawn: (last - spawned) / 1000,
          perSecond: seconds > 0 ? (receiver.distinct() - 1) / seconds : Number.NaN,
          serverCores: cores.target,
          cpu: cores,
          cpuMsPerDelivery: deliveredSince > 0 ? (cores.target * cpuWall * 1000) / deliveredSince : Number.NaN,
          pendingAfter: counts.pending ?? 0,
        });
        ctx.log(`drain: ${kind}: ${receiver.distinct()} delivered in ${seconds.toFixed(2)} s`);
      } finally {
        await proc.stop();
      }
    } finally {
      await ctx.drop(store);
    }
    stores.at(-1)!.profile = await profiledDrain(ctx, kind, receiver, Math.min(PROFILED_EVENTS, sizes.drainEvents));
  }
  return { dispatcher: dispatcherSettings({}), destinations: DRAIN_DESTINATIONS, stores };
}

/** The same drain again on a fresh store, under `node --cpu-prof`, to say where its time goes. */
async function profiledDrain(ctx: Context, kind: DrainStore['store'], receiver: BenchReceiver, events: number) {
  ctx.log(`drain: ${kind}: CPU profile of a drain of ${events.toLocaleString('en-US')} (not timed)`);
  const store = await ctx.store(kind);
  try {
    const owner = await store.createOwner({ name: 'Bench drain profile' });
    await seedAcross(store, owner, events, receiver.urls);
    receiver.reset();
    return await withProfile(ctx, `drain-${kind}`, store, {}, async () => {
      await receiver.waitForCount(events, DRAIN_TIMEOUT_MS);
    });
  } finally {
    await ctx.drop(store);
  }
}
