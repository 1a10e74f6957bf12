// The benchmark's own logic on fixed numbers, and one tiny bounded load against the
// bare Koa app. No speed is asserted anywhere: targets live in the verdict, not in tests.
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBareApp } from '../bare-koa.ts';
import { runLoad } from '../load.ts';
import type { BenchReport, MediaFile, MediaSection, ReadTarget } from '../model.ts';
import { FULL, QUICK, UsageError, parseOptions } from '../options.ts';
import { attribute, SERVER_CATEGORIES, type CpuProfile } from '../profile.ts';
import { readChart, renderMarkdown } from '../report.ts';
import { MB, median, medianBy, parseGcTrace, percentile, ratio, round, summarize } from '../stats.ts';
import { barChart, escapeXml, niceMax } from '../svg.ts';
import { evaluate } from '../verdict.ts';

describe('statistics', () => {
  it.each([
    [[1, 2, 3, 4], 50, 2.5],
    [[4, 1, 3, 2], 0, 1],
    [[4, 1, 3, 2], 100, 4],
    [Array.from({ length: 100 }, (_, i) => i + 1), 99, 99.01],
    [[7], 99, 7],
  ])('percentile of %o at p%d is %d (linear interpolation between ranks)', (values, p, expected) => {
    expect(percentile(values, p)).toBeCloseTo(expected, 10);
  });

  it('has no percentile of nothing, and refuses p outside 0..100', () => {
    expect(percentile([], 50)).toBeNaN();
    expect(() => percentile([1], 101)).toThrow(RangeError);
  });

  it('summarizes latencies as p50, p90, p99 and max', () => {
    expect(summarize([5, 1, 3])).toEqual({ count: 3, p50: 3, p90: 4.6, p99: 4.96, max: 5 });
    expect(median([3, 1, 2])).toBe(2);
  });

  it('keeps the whole run whose figure is the median, not a median of each figure', () => {
    const runs = [{ cpu: 2.6, encoder: 1.9 }, { cpu: 2.2, encoder: 1.5 }, { cpu: 2.4, encoder: 1.8 }];

    expect(medianBy(runs, (r) => r.cpu)).toBe(runs[2]);
    expect(medianBy([runs[0]!], (r) => r.cpu)).toBe(runs[0]);
    expect(() => medianBy([], (r: { cpu: number }) => r.cpu)).toThrow(RangeError);
  });

  it('gives a ratio only when both sides are there and the base is positive', () => {
    expect(ratio(30, 60)).toBe(0.5);
    expect(ratio(1, 0)).toBeNull();
    expect(ratio(null, 5)).toBeNull();
    expect(ratio(5, Number.NaN)).toBeNull();
  });

  it('rounds to significant figures without binary noise', () => {
    expect(round(12_345, 3)).toBe(12_300);
    expect(round(0.012345, 3)).toBe(0.0123);
    expect(round(2.5, 3)).toBe(2.5);
  });

  it('reads the live heap, the committed heap and the young generation from a --trace-gc log', () => {
    const log = [
      '[1:0x1]  100 ms: Scavenge 105.8 (183.4) -> 57.0 (184.6) MB, pooled: 2 MB, 4.10 / 1.49 ms  task;',
      '[1:0x1]  200 ms: Scavenge 107.2 (184.6) -> 58.4 (185.9) MB, pooled: 0 MB, 4.80 / 0.31 ms  task;',
      '[1:0x1]  300 ms: Mark-Compact 48.0 (175.6) -> 18.2 (168.3) MB, pooled: 15 MB, 8.79 / 0.03 ms',
      'avatar service listening',
    ].join('\n');
    expect(parseGcTrace(log)).toEqual({ scavenges: 2, fullGcs: 1, maxCommittedMB: 185.9, liveAfterFullGcMB: 18.2, scavengeFreedMB: 48.8 });
  });
});

describe('CPU profile attribution', () => {
  // root -> HTTP parser (node core) -> Koa -> limiter -> native SQLite: 3 samples
  // root -> socket read (node core) -> pg -> socket write (node core): 1 sample
  // idle: 4 samples; GC: 1 sample (ignored: weights are all 1 here)
  const frame = (functionName: string, url: string) => ({ functionName, url });
  const profile: CpuProfile = {
    nodes: [
      { id: 1, callFrame: frame('(root)', ''), children: [2, 6, 9, 10] },
      { id: 2, callFrame: frame('parserOnIncoming', 'node:_http_server'), children: [3] },
      { id: 3, callFrame: frame('dispatch', 'file:///app/node_modules/koa-compose/index.js'), children: [4] },
      { id: 4, callFrame: frame('consume', 'file:///app/server/src/storage/embedded/rateLimits.ts'), children: [5] },
      { id: 5, callFrame: frame('run', ''), children: [] },
      { id: 6, callFrame: frame('onStreamRead', 'node:internal/stream_base_commons'), children: [7] },
      { id: 7, callFrame: frame('handle', 'file:///app/node_modules/pg/lib/connection.js'), children: [8] },
      { id: 8, callFrame: frame('writeGeneric', 'node:internal/stream_base_commons'), children: [] },
      { id: 9, callFrame: frame('(idle)', ''), children: [] },
      { id: 10, callFrame: frame('(garbage collector)', ''), children: [] },
    ],
    samples: [5, 5, 5, 8, 9, 9, 9, 9, 10, 2],
  };

  it('gives each sample to the innermost recognised layer, native work to its caller, socket work of a client to the client', () => {
    const result = attribute(profile);
    const shares = Object.fromEntries(result.shares.map((s) => [s.name, s.share]));
    expect(result.idleShare).toBeCloseTo(0.4);
    expect(result.busySamples).toBe(6);
    expect(shares['rate limiter (count per request)']).toBeCloseTo(3 / 6);
    expect(shares['PostgreSQL / Redis clients (with their socket I/O)']).toBeCloseTo(1 / 6);
    expect(shares['garbage collection']).toBeCloseTo(1 / 6);
    expect(shares['Node core: HTTP, sockets, streams, timers']).toBeCloseTo(1 / 6);
  });

  it.each([
    ['storage/embedded/rateLimits.ts', 'rate limiter (count per request)'],
    ['storage/postgres-redis/redis/rateLimits.ts', 'rate limiter (count per request)'],
    ['storage/embedded/accounts.ts', 'auth (key hash + key lookup)'],
    ['storage/postgres-redis/accounts.ts', 'auth (key hash + key lookup)'],
    ['storage/embedded/jobs.ts', 'jobs: create / read + serialize'],
    ['storage/postgres-redis/jobs.ts', 'jobs: create / read + serialize'],
    ['storage/embedded/outbox.ts', 'webhook dispatcher (claim, sign, record)'],
    ['storage/postgres-redis/outbox.ts', 'webhook dispatcher (claim, sign, record)'],
  ])('finds server/src/%s where it is, under %s', (path, name) => {
    const url = new URL(`../../../server/src/${path}`, import.meta.url);

    expect(existsSync(url)).toBe(true);
    expect(SERVER_CATEGORIES.find((c) => c.url?.test(url.href))?.name).toBe(name);
  });

  it('keeps only the samples inside a time window', () => {
    const timed: CpuProfile = { ...profile, startTime: 1000, timeDeltas: profile.samples.map(() => 10) };
    // Samples at 1010, 1020, ... 1100: the window keeps the first four (3 limiter, 1 pg).
    const result = attribute(timed, undefined, { fromUs: 1000, toUs: 1040 });
    expect(result.busySamples).toBe(4);
    expect(result.shares[0]).toEqual({ name: 'rate limiter (count per request)', share: 0.75 });
  });
});

function target(id: string, role: ReadTarget['role'], rps: number, p99: number, koa = 10_000, prism = 1_000): ReadTarget {
  return {
    id,
    label: id,
    role,
    ...(id.startsWith('server-') ? { store: id === 'server-pg' ? ('pg' as const) : ('embedded' as const) } : {}),
    request: 'GET /v1/avatars/{id}',
    expectedStatus: 200,
    rounds: [{ rps, p50Ms: 1, p99Ms: p99, unexpected: 0 }],
    rps,
    p50Ms: 1,
    p99Ms: p99,
    unexpected: 0,
    vsKoa: { rps: rps / koa, p50: 1, p99: p99 / 2 },
    vsPrism: { rps: rps / prism, p50: 1, p99: p99 / 50 },
    peakRssBytes: 150_000_000,
    hwmBytes: id === 'server-pg' ? 230_000_000 : 160_000_000,
  };
}

/** A report as a run would leave it, with fixed figures. */
function fixedReport(): BenchReport {
  return {
    tool: 'avatar-service-bench',
    schemaVersion: 1,
    mode: 'full',
    command: 'npm run bench',
    startedAt: '2026-11-22T00:00:00.000Z',
    finishedAt: '2026-11-22T00:10:00.000Z',
    durationSeconds: 600,
    machine: { cpuModel: 'Test CPU', cores: 2, memoryBytes: 8 * 1024 ** 3, node: 'v24.21.0', platform: 'linux x64', loadAverageAtStart: [0.5, 0.4, 0.3] },
    commit: { sha: 'abc123', uncommittedFiles: 0 },
    sizes: FULL,
    stores: ['embedded', 'pg'],
    parts: [],
    read: {
      connections: 50,
      warmupSeconds: 1,
      roundSeconds: 4,
      rounds: 1,
      targets: [
        target('bare-koa', 'ceiling', 10_000, 2),
        target('server-embedded', 'server', 6_000, 5),
        target('server-pg', 'server', 2_000, 20),
        target('prism', 'mock', 1_000, 50),
      ],
      profiles: [],
      memory: [],
    },
    growth: {
      connections: 50,
      roundSeconds: 4,
      rounds: 1,
      stores: [
        {
          store: 'embedded',
          small: { avatars: 1_000, ids: 1_000, rps: 5_000, p50Ms: 4, p99Ms: 10, unexpected: 0, rounds: [] },
          large: { avatars: 1_000_000, ids: 100_000, rps: 4_000, p50Ms: 5, p99Ms: 40, unexpected: 0, rounds: [], seedSeconds: 10 },
          p99Ratio: 4,
          idleClaimMs: { small: 0.1, large: 120 },
        },
      ],
    },
    history: {
      connections: 50,
      roundSeconds: 4,
      rounds: 1,
      finishedJobs: 1_000_000,
      engineAvatarMs: 0,
      stores: [
        {
          store: 'embedded',
          empty: { finishedJobs: 0, seedSeconds: 0, acceptedPerSecond: 2_000, rounds: [], p99Ms: 50, unexpected: 0, createToReady: { count: 300, p50: 0, p90: 1, p99: 1, max: 2 }, idleClaimMs: 0.02 },
          full: { finishedJobs: 1_000_000, seedSeconds: 9, acceptedPerSecond: 1_900, rounds: [], p99Ms: 55, unexpected: 0, createToReady: { count: 300, p50: 0, p90: 1, p99: 2, max: 3 }, idleClaimMs: 0.02 },
          acceptedRatio: 0.95,
          createToReadyP99Ratio: 2,
        },
        {
          store: 'pg',
          empty: { finishedJobs: 0, seedSeconds: 0, acceptedPerSecond: 1_300, rounds: [], p99Ms: 50, unexpected: 0, createToReady: { count: 300, p50: 2, p90: 4, p99: 5, max: 9 }, idleClaimMs: 0.3 },
          full: { finishedJobs: 1_000_000, seedSeconds: 60, acceptedPerSecond: 1_000, rounds: [], p99Ms: 90, unexpected: 0, createToReady: { count: 300, p50: 3, p90: 6, p99: 12, max: 14 }, idleClaimMs: 4 },
          acceptedRatio: 1_000 / 1_300,
          createToReadyP99Ratio: 2.4,
        },
      ],
    },
    jobs: {
      engineAvatarMs: 0,
      stores: [
        {
          store: 'embedded',
          backlog: { jobs: 5_000, seconds: 2, perSecond: 2_500, workerConcurrency: 4 },
          createToReady: { count: 300, p50: 1, p90: 2, p99: 3, max: 4 },
          postToWebhook: { count: 300, p50: 5, p90: 8, p99: 9, max: 10 },
        },
      ],
    },
    drain: { dispatcher: { WEBHOOK_CONCURRENCY: '16' }, stores: [{ store: 'embedded', events: 10_000, delivered: 10_000, seconds: 10, secondsFromSpawn: 11, perSecond: 1_000, serverCores: 1, cpuMsPerDelivery: 1, pendingAfter: 0 }] },
    conformance: { status: 'not measured', reason: 'runner not available: test', server: {} },
    verdict: [],
    notes: [],
  };
}

describe('verdict', () => {
  const rows = Object.fromEntries(evaluate(fixedReport()).map((r) => [r.id, r]));

  it('checks the read targets against bare Koa and Prism, and says by how much a miss misses', () => {
    expect(rows['read-embedded-vs-koa']).toMatchObject({ met: true });
    expect(rows['read-pg-vs-koa']).toMatchObject({ met: false });
    expect(rows['read-pg-vs-koa']!.margin).toContain('5 points short (20% vs 25%)');
    expect(rows['read-embedded-vs-prism']).toMatchObject({ met: true });
    expect(rows['read-pg-vs-prism']).toMatchObject({ met: false });
    expect(rows['read-pg-vs-prism']!.margin).toContain('2x vs 5x');
  });

  it('explains a growth miss with the runner claim the run timed', () => {
    expect(rows['growth-embedded-p99']).toMatchObject({ met: false });
    expect(rows['growth-embedded-p99']!.why).toContain('120 ms with 1,000,000 avatars');
    expect(rows['growth-pg-p99']).toMatchObject({ met: null });
  });

  it('holds the write path with a long history to 0.9x the empty store and its create -> ready p99 to 1.5x, whole milliseconds allowed', () => {
    expect(rows['history-embedded-accepted']).toMatchObject({ met: true });
    // 2 ms against 1 ms is a ratio of 2 but within the record timestamps' resolution.
    expect(rows['history-embedded-create-to-ready']).toMatchObject({ met: true });
    expect(rows['history-pg-accepted']).toMatchObject({ met: false });
    expect(rows['history-pg-accepted']!.margin).toContain('0.769x vs >= 0.9x');
    expect(rows['history-pg-accepted']!.why).toContain('4 ms with the history');
    expect(rows['history-pg-create-to-ready']).toMatchObject({ met: false });
  });

  it('checks create to ready, webhooks, RSS and conformance', () => {
    expect(rows['jobs-create-to-ready']).toMatchObject({ met: true });
    expect(rows['webhooks-embedded-rate']).toMatchObject({ met: false });
    expect(rows['webhooks-embedded-rate']!.margin).toContain('1,000/s short (50% of the target)');
    expect(rows['rss-embedded']).toMatchObject({ met: true });
    expect(rows['rss-pg']).toMatchObject({ met: false });
    expect(rows['conformance-core']).toMatchObject({ met: null, why: 'runner not available: test' });
  });
});

describe('the media target', () => {
  const video = (aspectRatio: string, cpuSeconds: number): MediaFile => ({
    what: 'video (MP4)',
    aspectRatio,
    durationSeconds: 30,
    bytes: 1_600_000,
    makeMs: 2_000,
    cpuSeconds,
    renderCpuSeconds: 0.5,
    encoderCpuSeconds: 1.5,
    otherCores: 1.25,
    keptMs: 5,
    serverRssBeforeBytes: 100 * MB,
    serverPeakRssBytes: 110 * MB,
    renderPeakRssBytes: 150 * MB,
    encoderPeakRssBytes: 60 * MB,
    readsMeanwhile: 100,
    readP50Ms: 2,
    readMaxMs: 20,
  });
  const media = (files: MediaFile[]): MediaSection => ({ store: 'embedded', scriptSeconds: 30, engineAvatarMsDefault: 1500, engineVideoMsDefault: 3000, serverRssAfterBytes: 110 * MB, files });
  const row = (files: MediaFile[] | undefined) => evaluate({ ...fixedReport(), ...(files ? { media: media(files) } : {}) }).find((r) => r.id === 'media-cpu-9x16')!;

  it('is judged on the 9:16 video alone, with the other frames stated beside it', () => {
    const met = row([video('9:16', 2.4), video('16:9', 3), video('1:1', 1.5)]);

    expect(met).toMatchObject({ met: true });
    expect(met.measured).toBe('0.08 CPU s per s of video (2.4 s for 30 s, embedded (SQLite)); other frames: 16:9 0.1 s, 1:1 0.05 s');
  });

  it('is missed above 0.08 CPU s per second of video, and says where the CPU went', () => {
    const missed = row([video('9:16', 3), video('16:9', 2)]);

    expect(missed.met).toBe(false);
    expect(missed.margin).toBe('0.02 s over (0.1 vs <= 0.08, +25%)');
    expect(missed.why).toContain('the encoder (FFmpeg: decoding the pictures, the filters, x264, AAC) 1.5 s, the render process (drawing the portraits and captions, speech) 0.5 s, and the server 1 s');
    expect(missed.why).toContain("the machine's other processes used 1.3 cores on average");
  });

  it('is not measured without the media part or its 9:16 video', () => {
    expect(row(undefined)).toMatchObject({ met: null, why: 'media part not run' });
    expect(row([video('16:9', 2)])).toMatchObject({ met: null, why: 'no 9:16 video in the media part' });
  });
});

describe('the conformance target', () => {
  const conformance = (verdict: string, failed: { id: string; message: string }[]) => {
    const clockChecks = [{ id: 'webhooks.retry-schedule', outcome: 'passed' }];
    const report = { ...fixedReport(), conformance: { status: 'measured' as const, wallSeconds: 20, verdict, clockChecks, failed, slowest: [], server: {} } };
    return evaluate(report).find((r) => r.id === 'conformance-core')!;
  };

  it('is met by a passing run within the time', () => {
    expect(conformance('pass', [])).toMatchObject({ met: true });
  });

  it('is missed by a failing run, however fast, and names the checks that failed', () => {
    const row = conformance('fail', [{ id: 'jobs.video-ready', message: 'expected 200, got 500' }]);

    expect(row.met).toBe(false);
    expect(row.margin).toBeUndefined();
    expect(row.why).toBe('The run did not pass: jobs.video-ready failed (expected 200, got 500).');
  });
});

describe('report', () => {
  it('draws one bar per compared target, escaped, on a round axis', () => {
    const svg = barChart(
      [
        { label: 'bare <Koa>', value: 12_345, kind: 'ceiling' },
        { label: 'server', value: 5_000, kind: 'server', note: '41% of bare Koa' },
      ],
      'Read & compare',
      'subtitle',
    );
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    expect(svg.match(/<rect x="300"/g)).toHaveLength(2);
    expect(svg).toContain('bare &lt;Koa&gt;');
    expect(svg).toContain('Read &amp; compare');
    expect(svg).toContain('20k');
    expect(niceMax(12_345)).toBe(20_000);
    expect(niceMax(4_000)).toBe(5_000);
    expect(escapeXml(`"a" & 'b'`)).toBe('&quot;a&quot; &amp; &apos;b&apos;');
  });

  it('renders the verdict, the figures and the ratios as Markdown', () => {
    const report = fixedReport();
    report.verdict = evaluate(report);
    const md = renderMarkdown(report);
    expect(md).toContain('## Verdict');
    expect(md).toContain('| server-pg | 2,000/s | 1 ms | 20 ms | 20% / p99 10x | 2x / p99 0.4x | 0 | 230 MB |');
    expect(md).toContain('**missed**');
    expect(readChart(report)).toContain('server-embedded');
    expect(md).toContain('| PostgreSQL + Redis | 1,000,000 | 1,000/s |  | 90 ms | 3 ms | 12 ms | 4 ms | 0.769x accepted/s, 2.4x create -> ready p99 |');
  });
});

describe('options', () => {
  it('runs every part on both stores by default, and leaves conformance out of a quick run', () => {
    expect(parseOptions([])).toMatchObject({ quick: false, stores: ['embedded', 'pg'], sizes: FULL });
    const quick = parseOptions(['--quick']);
    expect(quick.sizes).toBe(QUICK);
    expect(quick.parts).not.toContain('conformance');
    expect(parseOptions(['--quick', '--only', 'conformance']).parts).toEqual(['conformance']);
  });

  it('selects and skips parts by name and refuses unknown ones', () => {
    expect(parseOptions(['--only', 'read,jobs', '--skip', 'jobs']).parts).toEqual(['read']);
    expect(() => parseOptions(['--only', 'reads'])).toThrow(UsageError);
    expect(() => parseOptions(['--stores', 'mysql'])).toThrow(/--stores: unknown "mysql"/);
  });
});

describe('a bounded load against the bare Koa app', () => {
  let server: Server;
  let url: string;
  beforeAll(async () => {
    server = createServer(createBareApp({ id: 'av_test', object: 'avatar' }).callback());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('sends exactly the amount asked, gets the JSON back and reports latencies', async () => {
    const result = await runLoad({ url, path: '/v1/avatars/av_test', connections: 2, amount: 20, maxSeconds: 10 });

    expect(result).toMatchObject({ responses: 20, ok: 20, errors: 0, cutShort: false, statusCodes: { 200: 20 } });
    expect(result.latency.count).toBe(20);
    expect(result.latency.p99).toBeGreaterThan(0);
  });

  it('counts answers other than the expected status as unexpected', async () => {
    const result = await runLoad({ url, path: '/nowhere', connections: 1, amount: 3, maxSeconds: 10 });

    expect(result).toMatchObject({ responses: 3, ok: 0, statusCodes: { 404: 3 } });
  });
});
