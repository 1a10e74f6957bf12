// The benchmark's targets, checked against one run's figures. A missed target says by
// how much and why, from what the same run measured (diagnostic loads, CPU profiles,
// the runner's idle claim); nothing here is asserted by a test.
import { RATE_LIMIT_BUCKETS, WEBHOOK_DELIVERY } from '../../contract/numbers.ts';
import type { Attribution } from './profile.ts';
import { cpuPerVideoSecond } from './mediaReport.ts';
import type { BenchReport, GrowthStore, MediaFile, ReadTarget, VerdictRow } from './model.ts';
import { formatInt, formatNumber, formatPercent, formatRatio, MB, round } from './stats.ts';
import { STORE_LABEL, type StoreKind } from './stores.ts';

export const TARGETS = {
  embeddedVsKoa: 0.5,
  pgVsKoa: 0.25,
  vsPrism: 5,
  growthP99Ratio: 1.5,
  historyAcceptedRatio: 0.9,
  historyCreateToReadyP99Ratio: 1.5,
  createToReadyMedianMs: 20,
  webhooksPerSecond: 2000,
  conformanceSeconds: 30,
  rssBytes: 200 * MB,
  /** CPU seconds a video's job may spend, every process of the server counted, per second of the video it makes. */
  mediaCpuPerVideoSecond: 0.08,
  /** The frame the media target is judged in: the target names a 9:16 video. */
  mediaAspectRatio: '9:16',
} as const;

/** "rate limiter 31%, auth 18%, ..." — the largest shares of a profile. */
export function topShares(attribution: Attribution | undefined, count = 4): string {
  if (!attribution || attribution.shares.length === 0) return 'no profile';
  return attribution.shares
    .slice(0, count)
    .map((s) => `${s.name} ${Math.round(s.share * 100)}%`)
    .join(', ');
}

function share(attribution: Attribution | undefined, name: RegExp): number {
  return attribution?.shares.filter((s) => name.test(s.name)).reduce((sum, s) => sum + s.share, 0) ?? 0;
}

/** The profile's categories that are the server's own code (server/src); the rest is Node, V8, Koa, prom-client and the database clients. */
const OWN_CODE = /^(webhook dispatcher|rate limiter|auth|job runner|jobs:|server middleware)/;

/**
 * What the read would reach if the server's own code cost nothing: the same busy CPU
 * spent on what is left. Below a target, the target is out of reach of the server's code.
 */
function ownCodeBound(report: BenchReport, kind: StoreKind, threshold: { rps: number; label: string }): string {
  const t = serverTarget(report, kind);
  const profile = report.read?.profiles.find((p) => p.store === kind)?.attribution;
  if (!t || !profile) return '';
  const own = share(profile, OWN_CODE);
  const bound = t.rps / (1 - own);
  return (
    ` The server's own code (limiter, auth, record read, middleware) takes ${formatPercent(own)} of the busy CPU in the profile; if it cost nothing, the rest would answer at most ${formatInt(bound)}/s` +
    (bound < threshold.rps
      ? `, still short of ${threshold.label} (${formatInt(threshold.rps)}/s): what remains is Node's HTTP core, Koa, V8 and the client libraries, below the server's own code.`
      : `, which would meet ${threshold.label} (${formatInt(threshold.rps)}/s).`)
  );
}

/** "short by 12.3 points (37.7% vs 50%): it would need 1.33x its throughput" */
function ratioShortfall(measured: number, threshold: number, asPercent: boolean): string {
  const need = threshold / measured;
  const gap = asPercent ? `${round((threshold - measured) * 100, 3)} points short (${formatPercent(measured)} vs ${formatPercent(threshold)})` : `${formatRatio(measured)} vs ${formatRatio(threshold)}`;
  return `${gap}: it would need ${formatRatio(need)} its throughput`;
}

function overBy(measured: number, threshold: number, unit: string): string {
  return `${formatNumber(measured - threshold)} ${unit} over (${formatNumber(measured)} vs < ${formatNumber(threshold)} ${unit}, +${formatPercent(measured / threshold - 1)})`;
}

/** CPU time of the target process per answered request, in µs (cores / req/s). */
export function cpuMicrosPerRequest(t: ReadTarget): number {
  return t.cpu && t.rps > 0 ? (t.cpu.target / t.rps) * 1e6 : Number.NaN;
}

function cpuLine(t: ReadTarget | undefined, cores: number): string {
  if (!t?.cpu) return '';
  const c = t.cpu;
  return `${t.label}: its process ${c.target.toFixed(2)} cores (${formatNumber(cpuMicrosPerRequest(t))} µs per request), the load generator ${c.loadGenerator.toFixed(2)}, PostgreSQL + Redis ${c.databases.toFixed(2)}, other processes ${c.other.toFixed(2)} (machine busy ${c.machine.toFixed(2)} of ${cores})`;
}

function readWhy(report: BenchReport, kind: StoreKind): string {
  const read = report.read!;
  const t = (id: string) => read.targets.find((x) => x.id === id);
  const server = t(`server-${kind}`)!;
  const healthz = t(`diag-healthz-${kind}`);
  const unknown = t(`diag-401-${kind}`);
  const profile = read.profiles.find((p) => p.store === kind)?.attribution;
  const parts: string[] = [];
  if (healthz && unknown) {
    parts.push(
      `Same run, same server process: GET /healthz (request ID, metrics, error handler and a store ping, a SQL round trip on PostgreSQL; no auth) reaches ${formatInt(healthz.rps)}/s (${formatPercent(healthz.vsKoa.rps)} of bare Koa); ` +
        `a request with an unknown key (the SHA-256 and a key lookup in the store every time, since unknown keys are never kept; answers 401) ${formatInt(unknown.rps)}/s (${formatPercent(unknown.vsKoa.rps)}); ` +
        `the full read (a kept key, the limiter's count, the avatar and the rate-limit headers) ${formatInt(server.rps)}/s (${formatPercent(server.vsKoa.rps)}).`,
    );
  }
  parts.push(`Where the server's CPU goes on this read (node --cpu-prof, share of busy time): ${topShares(profile, 6)}.`);
  const cpu = [cpuLine(t('bare-koa'), report.machine.cores), cpuLine(server, report.machine.cores)].filter(Boolean);
  if (cpu.length) parts.push(`CPU during the loads, in cores: ${cpu.join('; ')}.`);
  const fromStore = report.growth?.stores.find((g) => g.store === kind)?.small;
  const uncached = fromStore
    ? ` A read that goes to the store every time (READ_CACHE_MB=0, reads spread over 1,000 avatars, growth section of this run) reaches ${formatInt(fromStore.rps)}/s (${formatPercent(fromStore.rps / bareKoa(report)!.rps)} of bare Koa).`
    : '';
  if (kind === 'embedded') {
    parts.push(
      `The avatar read is ready, and a finished record never changes, so the process answers it from the answers it keeps (READ_CACHE_MB) with no SQLite read and no serialization; ` +
        `a key seen before is kept too, checked against the store's version (an SQLite pragma, at most once a millisecond), and the limiter counts in memory and writes behind: ` +
        `${formatPercent(share(profile, /^(rate limiter|auth|jobs:)/))} of busy CPU between them.` +
        uncached +
        (healthz ? ` GET /healthz, which has no key, no count and no record but pings SQLite, is at ${formatPercent(healthz.vsKoa.rps)} of bare Koa: the rest is the server's own middleware (request ID, access log, metrics, error handler) and Node's HTTP core.` : ''),
    );
  } else {
    parts.push(
      `The avatar read is ready, and a finished record never changes, so the process answers it from the answers it keeps (READ_CACHE_MB), and a key seen before is kept too: ` +
        `the read makes one round trip, a Redis EVALSHA that counts it and checks the kept key record's version. A record still under way adds a PostgreSQL read (a prepared statement) at the same time.` +
        uncached +
        ` On this machine the database processes share the two cores with the server and the load generator, so each round trip costs CPU on both sides ` +
        `(the client libraries take ${formatPercent(share(profile, /PostgreSQL \/ Redis/))} of the server's busy CPU).`,
    );
  }
  return parts.join(' ');
}

function growthWhy(g: GrowthStore): string {
  const parts: string[] = [];
  const claimGrowth = g.idleClaimMs.large / Math.max(g.idleClaimMs.small, 1e-3);
  parts.push(
    `The job runner's claim on an empty queue takes ${formatNumber(g.idleClaimMs.large)} ms with ${formatInt(g.large.avatars)} avatars against ${formatNumber(g.idleClaimMs.small)} ms with ${formatInt(g.small.avatars)}; ` +
      `the runner claims on every poll (JOB_POLL_MS, 500 ms by default) and after every create.`,
  );
  if (g.store === 'embedded' && claimGrowth > 10) {
    parts.push(
      `On SQLite the claim runs on the event loop, so every read that arrives meanwhile waits for it: the p99 of the large store is set by that stall. ` +
        `Its condition (status = 'queued' OR (status = 'processing' AND lease_until < ?)) does not imply the predicate of the partial index jobs_runnable, ` +
        `so SQLite scans the whole jobs table (EXPLAIN QUERY PLAN: SCAN jobs, then a temp B-tree for ORDER BY); rewriting it as status IN ('queued', 'processing') AND (...) would let the index answer.`,
    );
  }
  if (claimGrowth <= 10) {
    const p50Ratio = g.large.p50Ms / g.small.p50Ms;
    parts.push(
      `The claim does not grow much here, so it is not the cause. The median moved ${formatRatio(p50Ratio)} (${formatNumber(g.small.p50Ms)} -> ${formatNumber(g.large.p50Ms)} ms) ` +
        `and throughput ${formatRatio(g.large.rps / g.small.rps)}: ${p50Ratio > 1.2 ? 'every read got dearer (a deeper index and a working set of ' + formatInt(g.large.ids) + ' random IDs that the caches hold less of)' : 'the typical read did not change, only the tail did'}. ` +
        `p99 per round, small: ${g.small.rounds.map((r) => formatNumber(r.p99Ms)).join(', ')} ms; large: ${g.large.rounds.map((r) => formatNumber(r.p99Ms)).join(', ')} ms.`,
    );
  }
  if (g.profile) parts.push(`CPU profile of the large store under reads: ${topShares(g.profile, 5)}.`);
  return parts.join(' ');
}

const notMeasured = (id: string, target: string, why: string): VerdictRow => ({ id, target, measured: 'not measured', met: null, why });
const serverTarget = (report: BenchReport, kind: StoreKind): ReadTarget | undefined => report.read?.targets.find((t) => t.id === `server-${kind}`);
const bareKoa = (report: BenchReport): ReadTarget | undefined => report.read?.targets.find((t) => t.id === 'bare-koa');

/** Read throughput against bare Koa, the ceiling of any Koa server. */
function readVsKoaRows(report: BenchReport): VerdictRow[] {
  const rows: VerdictRow[] = [];
  const read = report.read;
  for (const [kind, threshold] of [['embedded', TARGETS.embeddedVsKoa], ['pg', TARGETS.pgVsKoa]] as const) {
    const id = `read-${kind}-vs-koa`;
    const target = `${STORE_LABEL[kind]} read throughput >= ${formatPercent(threshold)} of bare Koa`;
    const t = serverTarget(report, kind);
    if (!t || t.vsKoa.rps === null) {
      rows.push(notMeasured(id, target, read ? `${STORE_LABEL[kind]} not in this run (--stores)` : 'read part not run'));
      continue;
    }
    const met = t.vsKoa.rps >= threshold;
    rows.push({
      id,
      target,
      measured: `${formatInt(t.rps)}/s = ${formatPercent(t.vsKoa.rps)} of ${formatInt(read!.targets.find((x) => x.id === 'bare-koa')!.rps)}/s`,
      met,
      ...(met
        ? {}
        : {
            margin: ratioShortfall(t.vsKoa.rps, threshold, true),
            why: readWhy(report, kind) + ownCodeBound(report, kind, { rps: bareKoa(report)!.rps * threshold, label: `${formatPercent(threshold)} of bare Koa` }),
          }),
    });
  }
  return rows;
}

/** Read throughput against the Prism mock. */
function readVsPrismRows(report: BenchReport): VerdictRow[] {
  const rows: VerdictRow[] = [];
  const read = report.read;
  for (const kind of ['embedded', 'pg'] as const) {
    const id = `read-${kind}-vs-prism`;
    const target = `${STORE_LABEL[kind]} read throughput >= ${TARGETS.vsPrism}x the Prism mock`;
    const t = serverTarget(report, kind);
    if (!t || t.vsPrism.rps === null) {
      rows.push(notMeasured(id, target, read ? `${STORE_LABEL[kind]} not in this run (--stores)` : 'read part not run'));
      continue;
    }
    const prism = read!.targets.find((x) => x.id === 'prism')!;
    const met = t.vsPrism.rps >= TARGETS.vsPrism;
    rows.push({
      id,
      target,
      measured: `${formatRatio(t.vsPrism.rps)} (${formatInt(t.rps)}/s vs ${formatInt(prism.rps)}/s)`,
      met,
      ...(met
        ? {}
        : {
            margin: ratioShortfall(t.vsPrism.rps, TARGETS.vsPrism, false),
            why:
              `Prism runs here with its request log silenced (-v silent), its fastest setting, at ${formatInt(prism.rps)}/s. ` +
              (t.vsKoa.rps !== null && t.vsKoa.rps >= (kind === 'embedded' ? TARGETS.embeddedVsKoa : TARGETS.pgVsKoa)
                ? readWhy(report, kind)
                : `The server's own cost per read is explained under the bare-Koa target of the same store above.`) +
              ownCodeBound(report, kind, { rps: prism.rps * TARGETS.vsPrism, label: `${TARGETS.vsPrism}x the mock` }),
          }),
    });
  }
  return rows;
}

/** Growth: read p99 at the large size within 1.5x of the small one. */
function growthRows(report: BenchReport): VerdictRow[] {
  const rows: VerdictRow[] = [];
  for (const kind of report.stores) {
    const id = `growth-${kind}-p99`;
    const g = report.growth?.stores.find((s) => s.store === kind);
    const target = `${STORE_LABEL[kind]}: read p99 with ${formatInt(g?.large.avatars ?? 1_000_000)} avatars <= ${TARGETS.growthP99Ratio}x that with ${formatInt(g?.small.avatars ?? 1_000)}`;
    if (!g || g.p99Ratio === null) {
      rows.push(notMeasured(id, target, 'growth part not run'));
      continue;
    }
    const met = g.p99Ratio <= TARGETS.growthP99Ratio;
    rows.push({
      id,
      target,
      measured: `${formatRatio(g.p99Ratio)} (${formatNumber(g.large.p99Ms)} ms vs ${formatNumber(g.small.p99Ms)} ms)`,
      met,
      ...(met ? {} : { margin: `${formatRatio(g.p99Ratio)} vs <= ${TARGETS.growthP99Ratio}x: the p99 is ${formatNumber(g.large.p99Ms - g.small.p99Ms * TARGETS.growthP99Ratio)} ms above the allowance`, why: growthWhy(g) }),
    });
  }
  return rows;
}

/** Jobs: create to ready on the embedded store. */
function jobsRows(report: BenchReport): VerdictRow[] {
  const rows: VerdictRow[] = [];
  {
    const id = 'jobs-create-to-ready';
    const target = `create -> ready median < ${TARGETS.createToReadyMedianMs} ms (embedded, zero-work engine)`;
    const j = report.jobs?.stores.find((s) => s.store === 'embedded');
    if (!j) rows.push(notMeasured(id, target, report.jobs ? 'embedded store not in this run' : 'jobs part not run'));
    else {
      const met = j.createToReady.p50 < TARGETS.createToReadyMedianMs;
      rows.push({
        id,
        target,
        measured: `median ${formatNumber(j.createToReady.p50)} ms, p99 ${formatNumber(j.createToReady.p99)} ms (record timestamps, whole ms)`,
        met,
        ...(met ? {} : { margin: overBy(j.createToReady.p50, TARGETS.createToReadyMedianMs, 'ms'), why: 'See the jobs section: the runner is woken on create and claims with the query the growth section times.' }),
      });
    }
  }
  return rows;
}

/** The write path with a long history of finished jobs vs an empty store, per store. */
function historyRows(report: BenchReport): VerdictRow[] {
  const rows: VerdictRow[] = [];
  const h = report.history;
  const n = h ? formatInt(h.finishedJobs) : 'many';
  for (const kind of report.stores) {
    const s = h?.stores.find((x) => x.store === kind);
    const accepted = { id: `history-${kind}-accepted`, target: `${STORE_LABEL[kind]}: accepted/s with ${n} finished jobs >= ${TARGETS.historyAcceptedRatio}x an empty store's` };
    const latency = { id: `history-${kind}-create-to-ready`, target: `${STORE_LABEL[kind]}: create -> ready p99 with ${n} finished jobs <= ${TARGETS.historyCreateToReadyP99Ratio}x an empty store's` };
    if (!s) {
      for (const r of [accepted, latency]) rows.push(notMeasured(r.id, r.target, h ? 'store not in this run' : 'history part not run'));
      continue;
    }
    const why = `The runner's idle claim: ${formatNumber(s.full.idleClaimMs)} ms with the history, ${formatNumber(s.empty.idleClaimMs)} ms without; see the history section.`;
    const acceptedMet = s.acceptedRatio !== null && s.acceptedRatio >= TARGETS.historyAcceptedRatio;
    rows.push({
      ...accepted,
      measured: `${formatRatio(s.acceptedRatio)} (${formatInt(s.full.acceptedPerSecond)}/s vs ${formatInt(s.empty.acceptedPerSecond)}/s)`,
      met: acceptedMet,
      ...(acceptedMet ? {} : { margin: `${formatRatio(s.acceptedRatio)} vs >= ${TARGETS.historyAcceptedRatio}x`, why }),
    });
    // The record's timestamps are whole milliseconds: one of them is within their resolution, whatever the ratio says (2 ms vs 1 ms).
    const allowance = s.empty.createToReady.p99 * TARGETS.historyCreateToReadyP99Ratio + 1;
    const latencyMet = s.full.createToReady.p99 <= allowance;
    rows.push({
      ...latency,
      measured: `${formatRatio(s.createToReadyP99Ratio)} (${formatNumber(s.full.createToReady.p99)} ms vs ${formatNumber(s.empty.createToReady.p99)} ms, record timestamps, whole ms)`,
      met: latencyMet,
      ...(latencyMet ? {} : { margin: overBy(s.full.createToReady.p99, allowance, 'ms'), why }),
    });
  }
  return rows;
}

/** Webhooks: deliveries per second (the backlog drain is the dispatcher's capacity). */
function webhookRows(report: BenchReport): VerdictRow[] {
  const rows: VerdictRow[] = [];
  for (const kind of report.stores) {
    const id = `webhooks-${kind}-rate`;
    const target = `${STORE_LABEL[kind]}: webhooks >= ${formatInt(TARGETS.webhooksPerSecond)} deliveries/s`;
    const drain = report.drain?.stores.find((s) => s.store === kind);
    const live = report.webhooks?.stores.find((s) => s.store === kind);
    // Capacity is what the target asks about: the drain of a backlog. The steady-rate run only sends as fast as jobs are made.
    const rate = drain?.perSecond;
    if (rate === undefined || Number.isNaN(rate)) {
      rows.push(notMeasured(id, target, 'deliveries per second are taken from the drain part, which did not run'));
      continue;
    }
    const measured = [
      `${formatInt(rate)}/s draining ${formatInt(drain!.events)} queued`,
      live ? `lag p50 ${formatNumber(live.lag.p50)} ms, p99 ${formatNumber(live.lag.p99)} ms at ${report.webhooks!.rate} jobs/s` : '',
    ]
      .filter(Boolean)
      .join('; ');
    const met = rate >= TARGETS.webhooksPerSecond;
    rows.push({
      id,
      target,
      measured,
      met,
      ...(met
        ? {}
        : {
            margin: `${formatInt(TARGETS.webhooksPerSecond - rate)}/s short (${formatPercent(rate / TARGETS.webhooksPerSecond)} of the target): it would need ${formatRatio(TARGETS.webhooksPerSecond / rate)} its rate`,
            why: webhookWhy(report, kind),
          }),
    });
  }
  return rows;
}

/** The core conformance run's wall time, with the sandbox clock. */
function conformanceRows(report: BenchReport): VerdictRow[] {
  const rows: VerdictRow[] = [];
  {
    const id = 'conformance-core';
    const target = `core conformance run < ${TARGETS.conformanceSeconds} s against the local server, with the sandbox clock`;
    const c = report.conformance;
    if (!c || c.status !== 'measured' || c.wallSeconds === undefined) rows.push(notMeasured(id, target, c?.reason ?? 'conformance part not run'));
    else {
      const fast = c.wallSeconds < TARGETS.conformanceSeconds;
      // A run that fails is not the run the target is about, however fast it was.
      const passed = c.verdict === 'pass' && (c.clockChecks ?? []).length > 0 && (c.clockChecks ?? []).every((x) => x.outcome === 'passed');
      rows.push({
        id,
        target,
        measured: `${formatNumber(c.wallSeconds)} s (verdict ${c.verdict}; clock checks ${(c.clockChecks ?? []).map((x) => x.outcome).join(', ') || 'none'})`,
        met: fast && passed,
        ...(fast && passed
          ? {}
          : {
              ...(fast ? {} : { margin: overBy(c.wallSeconds, TARGETS.conformanceSeconds, 's') }),
              why: passed ? conformanceWhy(c) : `The run did not pass: ${(c.failed ?? []).map((f) => `${f.id} failed (${f.message})`).join('; ') || `verdict ${c.verdict}`}.`,
            }),
      });
    }
  }
  return rows;
}

/** Server RSS under the read load. */
function rssRows(report: BenchReport): VerdictRow[] {
  const rows: VerdictRow[] = [];
  for (const kind of report.stores) {
    const id = `rss-${kind}`;
    const target = `${STORE_LABEL[kind]}: server RSS < 200 MB under the read load`;
    const t = serverTarget(report, kind);
    const peak = t ? Math.max(t.peakRssBytes ?? 0, t.hwmBytes ?? 0) : 0;
    if (!t || peak === 0) {
      rows.push(notMeasured(id, target, 'read part not run'));
      continue;
    }
    const met = peak < TARGETS.rssBytes;
    rows.push({
      id,
      target,
      measured: `peak ${formatNumber(peak / MB)} MB (VmHWM)`,
      met,
      ...(met ? {} : { margin: overBy(peak / MB, TARGETS.rssBytes / MB, 'MB'), why: rssWhy(report, kind) }),
    });
  }
  return rows;
}

/**
 * The media cost of jobs: the CPU a 30-second video's job spends, every process of the
 * server counted, per second of video, judged in the frame the target names; the other
 * frames are stated beside it.
 */
function mediaRows(report: BenchReport): VerdictRow[] {
  const media = report.media;
  const frame = TARGETS.mediaAspectRatio;
  const id = `media-cpu-${frame.replace(':', 'x')}`;
  const target = `media cost of jobs: a ${formatNumber(media?.scriptSeconds ?? 30)}-second ${frame} video made by its job <= ${TARGETS.mediaCpuPerVideoSecond} CPU s per second of video (every process of the server)`;
  const judged = media?.files.find((f) => f.aspectRatio === frame);
  const cost = judged ? cpuPerVideoSecond(judged) : null;
  if (!media || !judged || cost === null) return [notMeasured(id, target, media ? `no ${frame} video in the media part` : 'media part not run')];
  const perFrame = (f: MediaFile) => `${f.aspectRatio} ${formatNumber(cpuPerVideoSecond(f))} s`;
  const others = media.files.filter((f) => f.aspectRatio && f !== judged).map(perFrame);
  const met = cost <= TARGETS.mediaCpuPerVideoSecond;
  return [
    {
      id,
      target,
      measured:
        `${formatNumber(cost)} CPU s per s of video (${formatNumber(judged.cpuSeconds)} s for ${formatNumber(judged.durationSeconds)} s, ${STORE_LABEL[media.store]})` +
        (others.length > 0 ? `; other frames: ${others.join(', ')}` : ''),
      met,
      ...(met
        ? {}
        : {
            margin: `${formatNumber(cost - TARGETS.mediaCpuPerVideoSecond)} s over (${formatNumber(cost)} vs <= ${TARGETS.mediaCpuPerVideoSecond}, +${formatPercent(cost / TARGETS.mediaCpuPerVideoSecond - 1)})`,
            why: mediaWhy(judged),
          }),
    },
  ];
}

/** Where a video's CPU went: its render process, its encoder, and the server around them. */
function mediaWhy(f: MediaFile): string {
  if ((f.renderCpuSeconds ?? null) === null && (f.encoderCpuSeconds ?? null) === null) return `The run did not sample the render's processes; ${formatNumber(f.cpuSeconds)} CPU s in all.`;
  const render = f.renderCpuSeconds ?? 0;
  const encoder = f.encoderCpuSeconds ?? 0;
  return (
    `Of ${formatNumber(f.cpuSeconds)} CPU s: the encoder (FFmpeg: decoding the pictures, the filters, x264, AAC) ${formatNumber(encoder)} s, ` +
    `the render process (drawing the portraits and captions, speech) ${formatNumber(render)} s, ` +
    `and the server ${formatNumber(f.cpuSeconds - render - encoder)} s (the job, keeping the file, and the ${formatInt(f.readsMeanwhile)} reads the benchmark sent meanwhile); ` +
    `the two processes as last sampled while the job ran, so each a little under its whole.` +
    (f.otherCores === undefined || Number.isNaN(f.otherCores)
      ? ''
      : ` Meanwhile the machine's other processes used ${formatNumber(f.otherCores, 2)} cores on average: the same work takes more CPU seconds when its processes share their cores.`)
  );
}

/** Every target of the benchmark, met, missed (with why) or not measured, in the report's order. */
export function evaluate(report: BenchReport): VerdictRow[] {
  return [readVsKoaRows, readVsPrismRows, growthRows, historyRows, jobsRows, webhookRows, conformanceRows, rssRows, mediaRows].flatMap((rows) => rows(report));
}

/** A bucket's daily limit as the contract states it (info.x-rate-limit-buckets), as the report writes numbers. */
function dayLimit(bucket: string): string {
  const day = RATE_LIMIT_BUCKETS[bucket]?.find((w) => w.name === 'day');
  return day ? formatNumber(day.limit) : 'its daily';
}

function conformanceWhy(c: NonNullable<BenchReport['conformance']>): string {
  const slowest = c.slowest ?? [];
  const parts = [`The slowest checks (their times overlap: checks share the run's jobs and wait on the same windows): ${slowest.map((s) => `${s.id} ${formatNumber(s.seconds)} s`).join(', ')}.`];
  parts.push(
    `With the sandbox clock the runner moves over rate-limit windows instead of waiting them out; what remains is the built-in engine's default timings (1.5 s per avatar, 3 s per video), ` +
      `the first webhook retry (${formatNumber(WEBHOOK_DELIVERY.retryDelaysSeconds[0] ?? 0)} s, observed in real time), the day spent request by request in both buckets (${dayLimit('generation')} and ${dayLimit('read')} requests), and short waits that watch for attempts that must not come.`,
  );
  return parts.join(' ');
}

function rssWhy(report: BenchReport, kind: StoreKind): string {
  const m = report.read?.memory.find((x) => x.store === kind);
  const idle = report.keys?.stores.find((x) => x.store === kind)?.cases[0]?.rssIdleBytes;
  const parts: string[] = [];
  if (idle) parts.push(`The server takes ${formatNumber(idle / MB)} MB idle, before any request (code, the compiled contract validators, the store's client).`);
  if (m) {
    const gc = m.traced.gc;
    parts.push(
      `Under the same load with --trace-gc (peak ${formatNumber(m.traced.hwmBytes / MB)} MB): ${gc.liveAfterFullGcMB === null ? 'no full GC ran, ' : `after the last full GC the JS heap held ${formatNumber(gc.liveAfterFullGcMB)} MB of live data, `}` +
        `while V8 had up to ${formatNumber(gc.maxCommittedMB)} MB of heap committed and each scavenge freed about ${formatNumber(gc.scavengeFreedMB)} MB (the young generation, which V8 grows with the allocation rate).`,
    );
    const saved = m.traced.hwmBytes - m.capped.hwmBytes;
    parts.push(
      `With node ${m.capped.flag} the same load peaks at ${formatNumber(m.capped.hwmBytes / MB)} MB (${formatInt(m.capped.rps)}/s against ${formatInt(m.traced.rps)}/s as run)` +
        (saved > 10 * MB ? `: ${formatNumber(saved / MB)} MB of the peak is heap V8 keeps for allocation speed, not data the server holds.` : '.'),
    );
  }
  return parts.join(' ');
}

function webhookWhy(report: BenchReport, kind: StoreKind): string {
  const settings = report.drain?.dispatcher ?? report.webhooks?.dispatcher ?? {};
  const drain = report.drain?.stores.find((s) => s.store === kind);
  const parts: string[] = [];
  if (drain && Number.isFinite(drain.cpuMsPerDelivery)) {
    const cores = report.machine.cores;
    const saturated = drain.cpu !== undefined && drain.cpu.machine >= cores - 0.2;
    const state =
      drain.serverCores >= 0.8
        ? 'it is CPU-bound (one event loop), so the rate is about 1 / (CPU per delivery)'
        : saturated
          ? `the machine was saturated (PostgreSQL + Redis ${drain.cpu!.databases.toFixed(2)} cores, the benchmark and its receiver ${drain.cpu!.loadGenerator.toFixed(2)}, other processes ${drain.cpu!.other.toFixed(2)}, of ${cores}), so the server got no more`
          : `it is not CPU-bound: deliveries wait on the store${drain.cpu && drain.cpu.databases > 0.1 ? ` (PostgreSQL + Redis used ${drain.cpu.databases.toFixed(2)} cores meanwhile, on the same ${cores} cores)` : ''} and the network`;
    parts.push(
      `While draining, the server process used ${drain.serverCores.toFixed(2)} cores, ${formatNumber(drain.cpuMsPerDelivery)} ms of CPU per delivery: ${state}; ` +
        `${formatInt(TARGETS.webhooksPerSecond)}/s would need ${formatNumber(1000 / TARGETS.webhooksPerSecond)} ms or less per delivery.`,
    );
  }
  parts.push(
    `The dispatcher claims the due events that fit its free attempt slots in one write transaction that also reads their accounts' signing secrets, signs each with HMAC-SHA256, ` +
      `POSTs on a connection kept alive per receiver, and records the deliveries that ended together in one write; at most WEBHOOK_CONCURRENCY=${settings.WEBHOOK_CONCURRENCY ?? '?'} are in flight, ` +
      `WEBHOOK_DESTINATION_CONCURRENCY=${settings.WEBHOOK_DESTINATION_CONCURRENCY ?? '?'} of them to one receiver (fair delivery across receivers; this benchmark spreads the backlog over ${report.drain?.destinations ?? 1}).`,
  );
  if (drain?.profile) parts.push(`CPU profile while draining: ${topShares(drain.profile, 5)}.`);
  return parts.join(' ');
}
