// The write path as the jobs table's history grows: POST /v1/avatars on an empty store and
// on one holding a large number of finished jobs (1,000,000 in a full run), in the same
// rounds, then create -> ready one job at a time on each. A claim must cost what the
// queue holds, not what history holds: these figures show whether it does.
import type { BenchReceiver } from '../receiver.ts';
import { SERVER_BASE_ENV, bearer, interleavedRounds, postJson, startBenchServer, waitFor, type Context, type RoundTarget } from '../harness.ts';
import type { HistorySection, HistoryStore, HistoryFigure } from '../model.ts';
import type { Proc } from '../procs.ts';
import { ratio, summarize } from '../stats.ts';
import { SEED_INPUT, STORE_LABEL, type BenchStore, type Owner, type StoreKind } from '../stores.ts';
import { WRITE_BODY } from './serve.ts';

const DRAIN_TIMEOUT_MS = 300_000;
const ONE_JOB_TIMEOUT_MS = 10_000;

interface Side {
  store: BenchStore;
  writer: Owner;
  single: Owner;
  proc: Proc;
  finishedJobs: number;
  seedSeconds: number;
}

async function side(ctx: Context, kind: StoreKind, finishedJobs: number): Promise<Side> {
  const store = await ctx.store(kind);
  const started = performance.now();
  if (finishedJobs > 0) {
    ctx.log(`history: seeding ${finishedJobs.toLocaleString('en-US')} finished jobs into a ${STORE_LABEL[kind]} store`);
    // Ready avatars are finished jobs: the history a service that has run a while holds.
    await store.seedAvatars(await store.createOwner({ name: 'Bench history' }), finishedJobs);
  }
  const seedSeconds = (performance.now() - started) / 1000;
  const writer = await store.createOwner({ name: 'Bench writes' });
  const single = await store.createOwner({ name: 'Bench one at a time' });
  const proc = await startBenchServer(`server-${kind}-history-${finishedJobs}`, store);
  return { store, writer, single, proc, finishedJobs, seedSeconds };
}

function writeTarget(id: string, s: Side, connections: number): RoundTarget {
  return { id, proc: s.proc, path: '/v1/avatars', method: 'POST', headers: { ...bearer(s.writer.apiKey), 'Content-Type': 'application/json' }, body: WRITE_BODY, expectedStatus: 202, connections };
}

/** Jobs made one at a time, the next once the previous one's webhook arrived: created_at to completed_at of the record. */
async function createToReady(s: Side, receiver: BenchReceiver, count: number, label: string): Promise<number[]> {
  const times: number[] = [];
  receiver.reset();
  for (let i = 0; i < count; i++) {
    const res = await postJson(`${s.proc.url}/v1/avatars`, s.single.apiKey, { ...SEED_INPUT, name: `Bench history ${i}`, webhook_url: receiver.url });
    if (res.status !== 202) throw new Error(`history: ${label}: POST /v1/avatars answered ${res.status}: ${JSON.stringify(res.body).slice(0, 300)}`);
    const delivery = await receiver.waitForResource(String(res.body.id), ONE_JOB_TIMEOUT_MS);
    times.push(delivery.terminalAt - delivery.acceptedAt);
  }
  return times;
}

export async function historyPhase(ctx: Context, receiver: BenchReceiver): Promise<HistorySection> {
  const { sizes } = ctx;
  const finished = sizes.largeAvatars;
  const stores: HistoryStore[] = [];
  for (const kind of ctx.options.stores) {
    const empty = await side(ctx, kind, 0);
    const full = await side(ctx, kind, finished);
    try {
      const targets = [writeTarget(`history-empty-${kind}`, empty, sizes.writeConnections), writeTarget(`history-full-${kind}`, full, sizes.writeConnections)];
      ctx.log(`history: ${STORE_LABEL[kind]}: POST /v1/avatars, empty store vs ${finished.toLocaleString('en-US')} finished jobs, ${sizes.rounds} x ${sizes.roundSeconds} s`);
      // Each round's jobs are run before the next round starts, on both stores: a round
      // measures a store accepting while its runner works off that round's jobs only, not
      // beside the other store's runner still working off the round before. The
      // one-at-a-time jobs then wait behind nothing either.
      const drained = async () => {
        for (const s of [empty, full]) {
          await waitFor(`history: the ${kind} rounds' jobs to finish`, async () => {
            const p = await s.store.jobProgress(s.writer);
            return p.terminal >= p.total ? true : undefined;
          }, DRAIN_TIMEOUT_MS, 100);
        }
      };
      const outcome = await interleavedRounds(ctx, targets, { rounds: sizes.rounds, seconds: sizes.roundSeconds, warmupSeconds: sizes.warmupSeconds, connections: sizes.writeConnections, what: 'history', settle: drained });
      ctx.log(`history: ${STORE_LABEL[kind]}: ${sizes.latencyJobs} jobs one at a time on each store`);
      const figure = async (s: Side, id: string): Promise<HistoryFigure> => {
        const o = outcome.get(id)!;
        const idleClaimMs = await s.store.idleClaimMs();
        return {
          finishedJobs: s.finishedJobs,
          seedSeconds: s.seedSeconds,
          acceptedPerSecond: o.rps,
          rounds: o.rounds,
          p99Ms: o.p99Ms,
          unexpected: o.unexpected,
          createToReady: summarize(await createToReady(s, receiver, sizes.latencyJobs, `${kind} (${s.finishedJobs} finished jobs)`)),
          idleClaimMs,
        };
      };
      const e = await figure(empty, targets[0]!.id);
      const f = await figure(full, targets[1]!.id);
      stores.push({ store: kind, empty: e, full: f, acceptedRatio: ratio(f.acceptedPerSecond, e.acceptedPerSecond), createToReadyP99Ratio: ratio(f.createToReady.p99, e.createToReady.p99) });
    } finally {
      for (const s of [empty, full]) {
        await s.proc.stop();
        await ctx.drop(s.store);
      }
    }
  }
  return { connections: sizes.writeConnections, roundSeconds: sizes.roundSeconds, rounds: sizes.rounds, finishedJobs: finished, engineAvatarMs: Number(SERVER_BASE_ENV.ENGINE_AVATAR_MS), drainedBetweenRounds: true, stores };
}
