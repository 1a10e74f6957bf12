// `npm run bench`: the whole benchmark in one run, so that ratios hold on a noisy
// machine. Each part starts what it needs (servers as child processes, isolated
// stores, a webhook receiver) and removes it; the whole run is bounded in time and
// stops by itself. Writes latest.md, latest.json and read-throughput.svg.
//
//   node scripts/bench/run.ts [--quick] [--only read,jobs] [--skip conformance] [--stores embedded]
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { join, relative } from 'node:path';
import { Context } from './harness.ts';
import type { BenchReport, Commit, Machine, PartStatus } from './model.ts';
import { PARTS, PART_TITLES, USAGE, UsageError, parseOptions, type Options, type Part } from './options.ts';
import { conformancePhase } from './parts/conformance.ts';
import { DRAIN_DESTINATIONS, drainPhase } from './parts/drain.ts';
import { jobsPhase } from './parts/jobs.ts';
import { historyPhase } from './parts/history.ts';
import { keysPhase } from './parts/keys.ts';
import { mediaPhase } from './parts/media.ts';
import { proxyPhase } from './parts/proxy.ts';
import { servePhase } from './parts/serve.ts';
import { ROOT } from './procs.ts';
import { startReceiver, type BenchReceiver } from './receiver.ts';
import { CHART_FILE, readChart, renderMarkdown } from './report.ts';
import { median } from './stats.ts';
import { evaluate } from './verdict.ts';

function machine(): Machine {
  const list = cpus();
  return {
    cpuModel: list[0]?.model.trim() ?? 'unknown',
    cores: list.length,
    memoryBytes: totalmem(),
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
    loadAverageAtStart: loadavg(),
  };
}

function commit(): Commit {
  const git = (...args: string[]) => execFileSync('git', args, { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  try {
    const sha = git('rev-parse', 'HEAD');
    const status = git('status', '--porcelain');
    return { sha, uncommittedFiles: status ? status.split('\n').length : 0 };
  } catch {
    return { sha: null, uncommittedFiles: 0 };
  }
}

/** Above this many cores used by other processes during the loads, the report says the machine was shared. */
const SHARED_MACHINE_CORES = 0.25;

/** Median of the cores other processes used over every measured round. */
function otherLoad(report: BenchReport): number | null {
  const rounds = [
    ...(report.read?.targets.flatMap((t) => t.rounds) ?? []),
    ...(report.growth?.stores.flatMap((s) => [...s.small.rounds, ...s.large.rounds]) ?? []),
    ...(report.write?.stores.flatMap((s) => s.rounds) ?? []),
  ];
  const others = rounds.map((r) => r.cpu?.other).filter((v): v is number => v !== undefined && Number.isFinite(v));
  return others.length ? median(others) : null;
}

/** How this run was started, as a reader would type it again. */
function invocation(): string {
  const args = process.argv.slice(2);
  if (process.env.npm_lifecycle_event === 'bench') return ['npm run bench', ...(args.length ? ['--', ...args] : [])].join(' ');
  return ['node scripts/bench/run.ts', ...args].join(' ');
}

const NOTES = [
  'Load: autocannon 9 programmatic API in the benchmark process (one event loop); every server, the bare Koa app and Prism run as separate child processes on 127.0.0.1.',
  'Prism runs with -v silent: scripts/mock.ts startMock has no logging option and reads its readiness from the log, so the benchmark starts the same Prism entry point itself and waits for an HTTP answer instead.',
  'The bare Koa ceiling (scripts/bench/bare-koa.ts) answers with the exact JSON the server sent for the avatar under test, serialized per request as the server does; no auth, no limiter, no store, no logging.',
  'Accounts are made through the server\'s createAccount with a plan of 10^9 requests per window and 10^9 credits; bulk rows (avatars, keys, queued jobs, outbox events) are inserted directly with SQL.',
  'Medians of rounds; p50/p99 are percentiles of every response in a round (linear interpolation), then the median over rounds.',
  'Memory figures are decimal megabytes (1 MB = 1,000,000 bytes), from /proc/<pid>/status.',
];

/** Writes latest.json, latest.md and the chart; returns the chart, if there is a read part. */
function writeReport(report: BenchReport, outDir: string): string | null {
  mkdirSync(outDir, { recursive: true });
  writeFileSync(join(outDir, 'latest.json'), `${JSON.stringify(report, null, 2)}\n`);
  writeFileSync(join(outDir, 'latest.md'), renderMarkdown(report));
  const chart = readChart(report);
  if (chart) writeFileSync(join(outDir, CHART_FILE), chart);
  return chart;
}

/** `--render latest.json`: the Markdown, the chart and the verdict again from recorded figures, measuring nothing. */
function render(file: string, outDir: string): number {
  const report = JSON.parse(readFileSync(file, 'utf8')) as BenchReport;
  report.verdict = evaluate(report);
  const note = `Text, verdict and chart rendered again from these figures on ${new Date().toISOString()} (--render); nothing was measured again.`;
  report.notes = [...report.notes.filter((n) => !n.endsWith('nothing was measured again.')), note];
  writeReport(report, outDir);
  console.log(`bench: rendered ${relative(process.cwd(), outDir) || '.'}/latest.md from ${relative(process.cwd(), file)} (figures of ${report.startedAt})`);
  return 0;
}

async function main(): Promise<number> {
  let options: Options;
  try {
    options = parseOptions(process.argv.slice(2));
  } catch (error) {
    if (error instanceof UsageError) {
      if (error.message) console.error(`bench: ${error.message}`);
      // Asked for (--help), the usage is the answer, on stdout; after a bad flag, it is part of the error.
      (error.message ? console.error : console.log)(USAGE);
      return error.message ? 2 : 0;
    }
    throw error;
  }
  if (options.render) return render(options.render, options.outDir);
  const ctx = new Context(options);
  const startedAt = new Date();
  const started = performance.now();
  const want = (part: Part) => options.parts.includes(part);
  const report: BenchReport = {
    tool: 'avatar-service-bench',
    schemaVersion: 1,
    mode: options.quick ? 'quick' : 'full',
    command: invocation(),
    startedAt: startedAt.toISOString(),
    finishedAt: '',
    durationSeconds: 0,
    machine: machine(),
    commit: commit(),
    sizes: options.sizes,
    stores: options.stores,
    parts: [],
    verdict: [],
    notes: [...NOTES],
  };
  if (options.quick) report.notes.unshift('QUICK run: short loads and small data (e.g. the "large" store has 20,000 avatars, not 1,000,000). A smoke test of the harness; do not quote these figures.');

  // A signal or the run's own time limit ends the run the same way: clean up, then leave.
  let stopping = false;
  const abort = async (why: string, code: number) => {
    if (stopping) return;
    stopping = true;
    ctx.log(`${why}: cleaning up`);
    await ctx.cleanup().catch(() => undefined);
    process.exit(code);
  };
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => void abort(`received ${signal}`, 130));
  const limit = setTimeout(() => void abort(`run limit of ${options.sizes.runLimitSeconds} s reached`, 1), options.sizes.runLimitSeconds * 1000);
  limit.unref();

  const statuses = new Map<Part, PartStatus>(PARTS.map((p) => [p, { part: p, status: 'skipped', reason: 'not selected' }]));
  if (options.quick && !options.explicitParts) statuses.set('conformance', { part: 'conformance', status: 'skipped', reason: 'left out of --quick runs unless named with --only' });
  // Runs one group of parts; a failure is recorded and the other groups still run.
  // `work` may return why its figures could not be taken (e.g. the runner is not there).
  const group = async (parts: Part[], work: () => Promise<string | void>) => {
    const selected = parts.filter(want);
    if (selected.length === 0) return;
    const t0 = performance.now();
    ctx.log(`-- ${selected.map((p) => PART_TITLES[p]).join('; ')}`);
    try {
      const notMeasured = await work();
      for (const p of selected) {
        statuses.set(p, { part: p, status: notMeasured ? 'not measured' : 'measured', seconds: (performance.now() - t0) / 1000, ...(notMeasured ? { reason: notMeasured } : {}) });
      }
    } catch (error) {
      const message = (error as Error).stack ?? String(error);
      ctx.log(`FAILED: ${message}`);
      for (const p of selected) statuses.set(p, { part: p, status: 'failed', seconds: (performance.now() - t0) / 1000, reason: (error as Error).message.split('\n')[0] });
    }
  };

  let receiver: BenchReceiver | undefined;
  try {
    await group(['read', 'growth', 'write'], async () => {
      Object.assign(report, await servePhase(ctx, { read: want('read'), growth: want('growth'), write: want('write') }));
    });
    await group(['history'], async () => {
      receiver ??= await startReceiver(DRAIN_DESTINATIONS);
      report.history = await historyPhase(ctx, receiver);
    });
    await group(['jobs', 'webhooks'], async () => {
      receiver ??= await startReceiver(DRAIN_DESTINATIONS);
      Object.assign(report, await jobsPhase(ctx, receiver, { jobs: want('jobs'), webhooks: want('webhooks') }));
    });
    await group(['drain'], async () => {
      receiver ??= await startReceiver(DRAIN_DESTINATIONS);
      report.drain = await drainPhase(ctx, receiver);
    });
    await group(['keys'], async () => {
      report.keys = await keysPhase(ctx);
    });
    await group(['conformance'], async () => {
      report.conformance = await conformancePhase(ctx);
      return report.conformance.reason;
    });
    await group(['media'], async () => {
      report.media = await mediaPhase(ctx);
    });
    await group(['proxy'], async () => {
      report.proxy = await proxyPhase(ctx);
    });
  } finally {
    await receiver?.close();
    await ctx.cleanup();
  }
  report.parts = PARTS.map((p) => statuses.get(p)!);
  report.finishedAt = new Date().toISOString();
  report.durationSeconds = (performance.now() - started) / 1000;
  report.verdict = evaluate(report);
  const noise = otherLoad(report);
  if (noise !== null && noise > SHARED_MACHINE_CORES) {
    report.notes.unshift(
      `The machine was shared during this run: other processes used a median of ${noise.toFixed(2)} cores (of ${report.machine.cores}) during the loads. Absolute figures are lower and noisier than on an idle machine; the rounds were interleaved so that ratios within the run still hold.`,
    );
  }

  const chart = writeReport(report, options.outDir);
  clearTimeout(limit);

  const where = relative(process.cwd(), options.outDir) || '.';
  console.log(`\nbench: ${report.mode} run in ${report.durationSeconds.toFixed(0)} s; report in ${where}/latest.md${chart ? `, chart ${where}/${CHART_FILE}` : ''}`);
  for (const v of report.verdict) console.log(`  ${v.met === null ? 'n/a   ' : v.met ? 'met   ' : 'MISSED'} ${v.target}: ${v.measured}`);
  const failed = report.parts.filter((p) => p.status === 'failed');
  for (const p of failed) console.log(`  part ${p.part} failed: ${p.reason}`);
  for (const p of report.parts.filter((x) => x.status === 'not measured')) console.log(`  part ${p.part} not measured: ${p.reason}`);
  // Targets are the verdict's business, not the exit code's; a part that broke is.
  return failed.length > 0 ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
