// The read comparison (bare Koa, the server on each
// store, Prism), peak RSS under it, read p99 as the store grows from 1,000 to
// 1,000,000 avatars, and the write path. They share the servers started here.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { bearer, getJson, interleavedRounds, startBenchServer, waitFor, withProfile, type Context, type RoundTarget, type RoundsOutcome } from '../harness.ts';
import { cycle, runLoad } from '../load.ts';
import type { GrowthSection, GrowthStore, MemoryFigure, ProfileFigure, ReadSection, ReadTarget, WriteSection, WriteStore } from '../model.ts';
import type { Attribution } from '../profile.ts';
import { startBalancer, startBareKoa, startPrism, type Proc } from '../procs.ts';
import { parseGcTrace, ratio } from '../stats.ts';
import { SEED_INPUT, STORE_LABEL, type BenchStore, type Owner, type StoreKind } from '../stores.ts';

/** The request body of the write path: a valid props avatar. */
export const WRITE_BODY = JSON.stringify({ ...SEED_INPUT, name: 'Bench write' });
const GET_AVATAR = 'GET /v1/avatars/{id}';
const QUEUE_DRAIN_TIMEOUT_MS = 300_000;

interface Served {
  kind: StoreKind;
  store: BenchStore;
  reader: Owner;
  writer: Owner;
  /** The avatar every read of the comparison asks for. */
  avatarId: string;
  proc: Proc;
}

export interface ServeResults {
  read?: ReadSection;
  growth?: GrowthSection;
  write?: WriteSection;
}

export async function servePhase(ctx: Context, want: { read: boolean; growth: boolean; write: boolean }): Promise<ServeResults> {
  const { sizes } = ctx;
  const served: Served[] = [];
  for (const kind of ctx.options.stores) {
    ctx.log(`${STORE_LABEL[kind]}: seeding ${sizes.smallAvatars.toLocaleString('en-US')} avatars`);
    const store = await ctx.store(kind);
    const reader = await store.createOwner({ name: 'Bench reads' });
    const writer = await store.createOwner({ name: 'Bench writes' });
    await store.seedAvatars(reader, sizes.smallAvatars);
    const [avatarId] = await store.sampleAvatarIds(reader, 1);
    const proc = await startBenchServer(`server-${kind}`, store);
    served.push({ kind, store, reader, writer, avatarId: avatarId!, proc });
  }

  const results: ServeResults = {};
  if (want.read) results.read = await readComparison(ctx, served);
  if (want.growth) results.growth = await growth(ctx, served);
  if (want.write) results.write = await writePath(ctx, served);
  for (const s of served) await s.proc.stop();
  for (const s of served) await ctx.drop(s.store);
  return results;
}

// --- 1 and 7: the read comparison ----------------------------------------------------

async function readComparison(ctx: Context, served: Served[]): Promise<ReadSection> {
  const { sizes } = ctx;
  const first = served[0]!;
  // The ceiling answers with the very JSON the server sends for the avatar under test.
  const sample = await getJson(`${first.proc.url}/v1/avatars/${first.avatarId}`, bearer(first.reader.apiKey));
  if (sample.status !== 200) throw new Error(`the server answered ${sample.status} to the sample GET: ${sample.text.slice(0, 300)}`);
  const bodyFile = join(ctx.tmp, 'avatar.json');
  writeFileSync(bodyFile, sample.text);

  const koa = await startBareKoa(bodyFile);
  const prism = await startPrism();
  const scale = await scaleOutTargets(served);
  const targets: (RoundTarget & { label: string; role: ReadTarget['role']; store?: StoreKind; request: string })[] = [
    { id: 'bare-koa', label: 'bare Koa + @koa/router (ceiling)', role: 'ceiling', request: GET_AVATAR, proc: koa, path: `/v1/avatars/${first.avatarId}`, expectedStatus: 200 },
    ...served.map((s) => ({
      id: `server-${s.kind}`,
      label: `server, ${STORE_LABEL[s.kind]}`,
      role: 'server' as const,
      store: s.kind,
      request: GET_AVATAR,
      proc: s.proc,
      path: `/v1/avatars/${s.avatarId}`,
      headers: bearer(s.reader.apiKey),
      expectedStatus: 200,
    })),
    {
      id: 'prism',
      label: 'Prism mock (-v silent)',
      role: 'mock',
      request: GET_AVATAR,
      proc: prism,
      path: `/v1/avatars/${first.avatarId}`,
      headers: bearer('sk_test_bench_prism'),
      expectedStatus: 200,
    },
    ...scale.targets,
    // Diagnostics: what the server costs without the avatar read, to explain the gap.
    ...served.flatMap((s) => [
      { id: `diag-healthz-${s.kind}`, label: `server, ${STORE_LABEL[s.kind]}: GET /healthz`, role: 'diagnostic' as const, store: s.kind, request: 'GET /healthz (no auth, no limiter; pings the store)', proc: s.proc, path: '/healthz', expectedStatus: 200 },
      {
        id: `diag-401-${s.kind}`,
        label: `server, ${STORE_LABEL[s.kind]}: unknown key`,
        role: 'diagnostic' as const,
        store: s.kind,
        request: `${GET_AVATAR} with an unknown key (auth lookup, 401; no limiter, no read)`,
        proc: s.proc,
        path: `/v1/avatars/${s.avatarId}`,
        headers: bearer('sk_test_unknown_key_for_the_bench_0000'),
        expectedStatus: 401,
      },
    ]),
  ];
  ctx.log(`read: ${targets.length} targets, ${sizes.rounds} x ${sizes.roundSeconds} s each at ${sizes.connections} connections`);
  const outcome = await interleavedRounds(ctx, targets, { rounds: sizes.rounds, seconds: sizes.roundSeconds, warmupSeconds: sizes.warmupSeconds, connections: sizes.connections, what: 'read' });
  await koa.stop();
  await prism.stop();
  await scale.stop();

  const koaOut = outcome.get('bare-koa')!;
  const prismOut = outcome.get('prism')!;
  const ratios = (o: RoundsOutcome, base: RoundsOutcome) => ({ rps: ratio(o.rps, base.rps), p50: ratio(o.p50Ms, base.p50Ms), p99: ratio(o.p99Ms, base.p99Ms) });
  const readTargets: ReadTarget[] = targets.map((t) => {
    const o = outcome.get(t.id)!;
    return {
      id: t.id,
      label: t.label,
      role: t.role,
      ...(t.store ? { store: t.store } : {}),
      request: t.request,
      expectedStatus: t.expectedStatus,
      rounds: o.rounds,
      rps: o.rps,
      p50Ms: o.p50Ms,
      p99Ms: o.p99Ms,
      unexpected: o.unexpected,
      ...(o.cpu ? { cpu: o.cpu } : {}),
      vsKoa: ratios(o, koaOut),
      vsPrism: ratios(o, prismOut),
      ...(o.peakRssBytes ? { peakRssBytes: o.peakRssBytes, hwmBytes: o.hwmBytes } : {}),
    };
  });

  const profiles: ProfileFigure[] = [];
  for (const s of served) {
    ctx.log(`read: CPU profile of the server on ${STORE_LABEL[s.kind]} (${sizes.profileSeconds} s, not timed)`);
    // A store of its own, so the measured servers above are left as they were.
    const store = await ctx.store(s.kind);
    const owner = await store.createOwner({ name: 'Bench profile' });
    await store.seedAvatars(owner, sizes.smallAvatars);
    const [id] = await store.sampleAvatarIds(owner, 1);
    const attribution = await profiledLoad(ctx, store, { path: `/v1/avatars/${id}`, headers: bearer(owner.apiKey) });
    await ctx.drop(store);
    profiles.push({ store: s.kind, what: `${GET_AVATAR}, ${sizes.connections} connections`, attribution });
  }
  const memory: MemoryFigure[] = [];
  for (const s of served) memory.push(await memoryDiagnostic(ctx, s.kind));
  return { connections: sizes.connections, warmupSeconds: sizes.warmupSeconds, roundSeconds: sizes.roundSeconds, rounds: sizes.rounds, targets: readTargets, profiles, memory };
}

/**
 * Scaling out on PostgreSQL + Redis: the same read through a round-robin balancer to one
 * API process and to two (the second started on the same store), so that the balancer's
 * own cost is in both and the ratio is what a second process adds.
 */
async function scaleOutTargets(served: Served[]) {
  const pg = served.find((s) => s.kind === 'pg');
  if (!pg) return { targets: [], stop: async () => undefined };
  // API only: idle through the other targets' rounds, with no workers polling meanwhile.
  const second = await startBenchServer('server-pg-2', pg.store, { ROLE: 'api' });
  const one = await startBalancer('balancer-1', [pg.proc]);
  const two = await startBalancer('balancer-2', [pg.proc, second]);
  const read = { request: GET_AVATAR, path: `/v1/avatars/${pg.avatarId}`, headers: bearer(pg.reader.apiKey), expectedStatus: 200, role: 'scale' as const, store: 'pg' as const };
  return {
    targets: [
      { id: 'scale-pg-1', label: `${STORE_LABEL.pg}: 1 API process behind a round-robin balancer`, proc: one, ...read },
      { id: 'scale-pg-2', label: `${STORE_LABEL.pg}: 2 API processes behind a round-robin balancer`, proc: two, ...read },
    ],
    async stop() {
      await Promise.all([one.stop(), two.stop()]);
      await second.stop();
    },
  };
}

/** A tighter young generation than the server's own (`npm start`), tried by the memory diagnostic (MB per semi-space). */
export const CAPPED_SEMI_SPACE = '--max-semi-space-size=8';

/**
 * Why the RSS is what it is: the read load again on a fresh store, once under
 * --trace-gc (live heap after a full GC, heap committed, young generation) and once
 * with the young generation capped tighter than the server's own. Untimed; only memory is compared.
 */
async function memoryDiagnostic(ctx: Context, kind: StoreKind): Promise<MemoryFigure> {
  const { sizes } = ctx;
  ctx.log(`read: memory of the server on ${STORE_LABEL[kind]} under --trace-gc and with ${CAPPED_SEMI_SPACE} (not timed)`);
  const store = await ctx.store(kind);
  try {
    const owner = await store.createOwner({ name: 'Bench memory' });
    await store.seedAvatars(owner, sizes.smallAvatars);
    const [id] = await store.sampleAvatarIds(owner, 1);
    const once = async (nodeArgs: string[]) => {
      const proc = await startBenchServer(`memory-${kind}`, store, {}, nodeArgs);
      try {
        // Twice a round: long enough for the heap to grow as it does across the measured rounds.
        const seconds = sizes.roundSeconds * 2;
        const load = await runLoad({ url: proc.url, path: `/v1/avatars/${id}`, headers: bearer(owner.apiKey), connections: sizes.connections, durationSeconds: seconds, maxSeconds: seconds * 3 + 10 });
        return { hwmBytes: proc.memory()?.hwmBytes ?? Number.NaN, rps: load.rps, output: proc.output() };
      } finally {
        await proc.stop();
      }
    };
    const traced = await once(['--trace-gc']);
    const capped = await once([CAPPED_SEMI_SPACE]);
    return {
      store: kind,
      traced: { hwmBytes: traced.hwmBytes, rps: traced.rps, gc: parseGcTrace(traced.output) },
      capped: { flag: CAPPED_SEMI_SPACE, hwmBytes: capped.hwmBytes, rps: capped.rps },
    };
  } finally {
    await ctx.drop(store);
  }
}

/** A CPU profile of `GET path` under the read load, on `store`. */
async function profiledLoad(ctx: Context, store: BenchStore, load: { path: string; headers: Record<string, string>; setup?: RoundTarget['setup'] }, env: Record<string, string> = {}): Promise<Attribution> {
  const { sizes } = ctx;
  return withProfile(ctx, store.kind, store, env, async (proc) => {
    await runLoad({ url: proc.url, ...load, connections: sizes.connections, durationSeconds: sizes.profileSeconds, maxSeconds: sizes.profileSeconds * 3 + 10 });
  });
}

// --- 5a: growth ------------------------------------------------------------------------

/**
 * Both growth servers keep no answers (READ_CACHE_MB=0): every read goes to the store,
 * which is what growth is about; with the default the 1,000 small records would all be
 * kept and the large store's random IDs mostly not.
 */
const STORE_READS = { READ_CACHE_MB: '0' };

async function growth(ctx: Context, served: Served[]): Promise<GrowthSection> {
  const { sizes } = ctx;
  type Sized = { store: BenchStore; owner: Owner; ids: string[]; proc: Proc; seedSeconds: number };
  const sized = async (kind: StoreKind, size: 'small' | 'large', avatars: number, ids: number): Promise<Sized> => {
    ctx.log(`growth: seeding ${avatars.toLocaleString('en-US')} avatars into a ${STORE_LABEL[kind]} store`);
    const store = await ctx.store(kind);
    const owner = await store.createOwner({ name: `Bench growth ${size}` });
    const started = performance.now();
    await store.seedAvatars(owner, avatars);
    const seedSeconds = (performance.now() - started) / 1000;
    const drawn = await store.sampleAvatarIds(owner, ids);
    ctx.log(`growth: seeded in ${seedSeconds.toFixed(1)} s; ${drawn.length.toLocaleString('en-US')} IDs drawn for the reads`);
    const proc = await startBenchServer(`server-${kind}-${size}`, store, STORE_READS);
    return { store, owner, ids: drawn, proc, seedSeconds };
  };
  const pairs: { kind: StoreKind; small: Sized; large: Sized }[] = [];
  for (const s of served) {
    pairs.push({ kind: s.kind, small: await sized(s.kind, 'small', sizes.smallAvatars, Math.min(sizes.smallAvatars, sizes.growthIds)), large: await sized(s.kind, 'large', sizes.largeAvatars, sizes.growthIds) });
  }
  const pathOf = (pick: () => string) => (req: { path?: string }) => ({ ...req, path: `/v1/avatars/${pick()}` });
  const target = (id: string, x: Sized): RoundTarget => ({ id, proc: x.proc, path: '/v1/avatars/x', headers: bearer(x.owner.apiKey), expectedStatus: 200, setup: pathOf(cycle(x.ids)) });
  const targets: RoundTarget[] = pairs.flatMap((p) => [target(`small-${p.kind}`, p.small), target(`large-${p.kind}`, p.large)]);
  const outcome = await interleavedRounds(ctx, targets, { rounds: sizes.rounds, seconds: sizes.roundSeconds, warmupSeconds: sizes.warmupSeconds, connections: sizes.connections, what: 'growth' });

  const stores: GrowthStore[] = [];
  for (const p of pairs) {
    const small = outcome.get(`small-${p.kind}`)!;
    const big = outcome.get(`large-${p.kind}`)!;
    const idleClaimMs = { small: await p.small.store.idleClaimMs(), large: await p.large.store.idleClaimMs() };
    await p.small.proc.stop();
    await p.large.proc.stop();
    await ctx.drop(p.small.store);
    ctx.log(`growth: CPU profile of the server on the large ${STORE_LABEL[p.kind]} store (not timed)`);
    const profile = await profiledLoad(ctx, p.large.store, { path: '/v1/avatars/x', headers: bearer(p.large.owner.apiKey), setup: pathOf(cycle(p.large.ids)) }, STORE_READS);
    await ctx.drop(p.large.store);
    stores.push({
      store: p.kind,
      small: { avatars: sizes.smallAvatars, ids: p.small.ids.length, rps: small.rps, p50Ms: small.p50Ms, p99Ms: small.p99Ms, unexpected: small.unexpected, rounds: small.rounds },
      large: { avatars: sizes.largeAvatars, ids: p.large.ids.length, rps: big.rps, p50Ms: big.p50Ms, p99Ms: big.p99Ms, unexpected: big.unexpected, rounds: big.rounds, seedSeconds: p.large.seedSeconds },
      p99Ratio: ratio(big.p99Ms, small.p99Ms),
      idleClaimMs,
      profile,
    });
  }
  return { connections: sizes.connections, roundSeconds: sizes.roundSeconds, rounds: sizes.rounds, stores };
}

// --- 2: the write path -------------------------------------------------------------------

/** The write request: a props avatar by the writing account. */
function writeLoad(s: Served) {
  return {
    path: '/v1/avatars',
    method: 'POST' as const,
    headers: { ...bearer(s.writer.apiKey), 'Content-Type': 'application/json' },
    body: WRITE_BODY,
    expectedStatus: 202,
  };
}

async function writePath(ctx: Context, served: Served[]): Promise<WriteSection> {
  const { sizes } = ctx;
  // The ceiling: bare Koa doing one SQLite insert of the body per request, in the same rounds.
  const bodyFile = join(ctx.tmp, 'write-ceiling.json');
  writeFileSync(bodyFile, '{}');
  const koa = await startBareKoa(bodyFile, join(ctx.tmp, 'write-ceiling.db'));
  const ceiling: RoundTarget = { id: 'write-bare-koa-sqlite', proc: koa, path: '/v1/avatars', method: 'POST', headers: { 'Content-Type': 'application/json' }, body: WRITE_BODY, expectedStatus: 202, connections: sizes.writeConnections };
  const targets: RoundTarget[] = [ceiling, ...served.map((s) => ({ id: `write-${s.kind}`, proc: s.proc, ...writeLoad(s), connections: sizes.writeConnections }))];
  ctx.log(`write: POST /v1/avatars, ${sizes.rounds} x ${sizes.roundSeconds} s at ${sizes.writeConnections} connections`);
  const outcome = await interleavedRounds(ctx, targets, { rounds: sizes.rounds, seconds: sizes.roundSeconds, warmupSeconds: sizes.warmupSeconds, connections: sizes.writeConnections, what: 'write' }).finally(() => koa.stop());
  const bare = outcome.get(ceiling.id)!;
  // The runner works through what the rounds queued, in the same process: how far behind was it when they ended?
  const roundsEnded = performance.now();
  const atEnd = await Promise.all(served.map((s) => s.store.jobProgress(s.writer)));
  const drained = await Promise.all(
    served.map((s) =>
      waitFor(`write: jobs of ${s.kind} to finish`, async () => {
        const p = await s.store.jobProgress(s.writer);
        return p.terminal >= p.total ? (performance.now() - roundsEnded) / 1000 : undefined;
      }, QUEUE_DRAIN_TIMEOUT_MS, 100).catch(() => null),
    ),
  );
  const stores: WriteStore[] = [];
  for (const [i, s] of served.entries()) {
    const o = outcome.get(`write-${s.kind}`)!;
    const statusCodes: Record<string, number> = {};
    for (const load of o.loads) for (const [code, n] of Object.entries(load.statusCodes)) statusCodes[code] = (statusCodes[code] ?? 0) + n;
    // Where a write's time goes, on the same store as it now stands (untimed).
    await s.proc.stop();
    const idleClaimMsAfter = await s.store.idleClaimMs();
    ctx.log(`write: CPU profile of POST /v1/avatars on ${STORE_LABEL[s.kind]} (${sizes.profileSeconds} s, not timed)`);
    const profile = await withProfile(ctx, `write-${s.kind}`, s.store, {}, async (proc) => {
      await runLoad({ url: proc.url, ...writeLoad(s), connections: sizes.writeConnections, durationSeconds: sizes.profileSeconds, maxSeconds: sizes.profileSeconds * 3 + 10 });
    });
    stores.push({
      store: s.kind,
      rounds: o.rounds,
      acceptedPerSecond: o.rps,
      p50Ms: o.p50Ms,
      p99Ms: o.p99Ms,
      unexpected: o.unexpected,
      statusCodes,
      jobsAccepted: atEnd[i]!.total,
      jobsQueuedAtEnd: atEnd[i]!.total - atEnd[i]!.terminal,
      queueDrainedSeconds: drained[i] ?? null,
      idleClaimMsAfter,
      profile,
    });
  }
  return {
    connections: sizes.writeConnections,
    roundSeconds: sizes.roundSeconds,
    rounds: sizes.rounds,
    body: WRITE_BODY,
    ceiling: { acceptedPerSecond: bare.rps, p50Ms: bare.p50Ms, p99Ms: bare.p99Ms, unexpected: bare.unexpected },
    stores,
  };
}
