// The wall time of the conformance runner's core profile against a
// local server as `npm start` runs it (embedded store, default engine timings and
// limits), with the three keys and the signing secret the runner asks for: once with
// the server's sandbox clock (the target), once waiting every window out.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { DEFAULT_PLAN } from '../../../server/src/domain/rateLimits.ts';
import type { Context } from '../harness.ts';
import type { ConformanceSection } from '../model.ts';
import { ROOT, startServer } from '../procs.ts';

const RUNNER = join(ROOT, 'conformance', 'src', 'run.ts');
/** Enough for every job the runner makes; the runner's own "empty" key covers 402. */
const RUNNER_CREDITS = 100_000;

/** What the benchmark reads of the runner's report (conformance/src/report/model.ts). */
interface RunnerReport {
  durationMs: number;
  verdict: string;
  abort?: { kind: string; message: string };
  counts: Record<string, number>;
  results: { id: string; outcome: string; durationMs: number; failure?: { clause?: string; message?: string } }[];
}
type RunConformance = (options: Record<string, unknown>) => Promise<RunnerReport>;

/** The runner is imported at run time, so the benchmark still runs (and says so) when it is absent or unfinished. */
async function loadRunner(): Promise<RunConformance | string> {
  if (!existsSync(RUNNER)) return 'conformance/src/run.ts does not exist';
  try {
    const mod = (await import(pathToFileURL(RUNNER).href)) as { runConformance?: unknown };
    return typeof mod.runConformance === 'function' ? (mod.runConformance as RunConformance) : 'conformance/src/run.ts does not export runConformance';
  } catch (error) {
    return `conformance/src/run.ts does not load: ${(error as Error).message.split('\n')[0]}`;
  }
}

/** The checks a run can make only with the server's sandbox clock. */
const CLOCK_CHECKS = ['rate-limits.daily-windows', 'webhooks.retry-schedule', 'credits.monthly-quota'];

/** What failed in a run, so that a failure seen once can be followed up. */
const failedChecks = (report: RunnerReport) =>
  report.results.filter((r) => r.outcome === 'failed').map((r) => ({ id: r.id, message: r.failure?.message?.slice(0, 300) ?? '' }));

export async function conformancePhase(ctx: Context): Promise<ConformanceSection> {
  const serverEnv = { LOG_LEVEL: 'warn', SERVICE_MODE: 'sandbox' };
  const described = { store: 'embedded', engine: 'defaults (ENGINE_AVATAR_MS=1500, ENGINE_VIDEO_MS=3000)', plan: 'DEFAULT_PLAN (the contract limits)', ...serverEnv };
  const runConformance = await loadRunner();
  if (typeof runConformance === 'string') return { status: 'not measured', reason: `runner not available: ${runConformance}`, server: described };

  const store = await ctx.store('embedded');
  try {
    const proc = await startServer('server-conformance', { ...serverEnv, ...store.env });
    /** One core run on fresh accounts, within the part's time limit. */
    const timed = async (clock: boolean): Promise<{ report: RunnerReport | 'timeout'; wallSeconds: number; startSecondOfMinute: number } | string> => {
      const main = await store.createOwner({ name: 'Conformance main', plan: DEFAULT_PLAN, monthlyCredits: RUNNER_CREDITS });
      const second = await store.createOwner({ name: 'Conformance second', plan: DEFAULT_PLAN, monthlyCredits: RUNNER_CREDITS });
      const empty = await store.createOwner({ name: 'Conformance empty', plan: DEFAULT_PLAN, monthlyCredits: 0 });
      ctx.log(`conformance: core profile ${clock ? 'with' : 'without'} the sandbox clock against ${proc.url} (limit ${ctx.sizes.conformanceTimeoutSeconds} s)`);
      const started = performance.now();
      const startSecondOfMinute = new Date().getUTCSeconds();
      let timer: NodeJS.Timeout | undefined;
      const limit = new Promise<'timeout'>((resolve) => {
        timer = setTimeout(() => resolve('timeout'), ctx.sizes.conformanceTimeoutSeconds * 1000);
      });
      try {
        const report = await Promise.race([
          runConformance({ baseUrl: proc.url, apiKey: main.apiKey, secondKey: second.apiKey, emptyKey: empty.apiKey, signingSecret: main.signingSecret, profile: 'core', clock }),
          limit,
        ]);
        return { report, wallSeconds: (performance.now() - started) / 1000, startSecondOfMinute };
      } catch (error) {
        return `the runner threw: ${(error as Error).message.split('\n')[0]}`;
      } finally {
        clearTimeout(timer);
      }
    };
    try {
      const withClock = await timed(true);
      if (typeof withClock === 'string') return { status: 'not measured', reason: withClock, server: described };
      const { report, wallSeconds, startSecondOfMinute } = withClock;
      if (report === 'timeout') {
        return { status: 'not measured', reason: `the core run did not finish within ${ctx.sizes.conformanceTimeoutSeconds} s`, wallSeconds, server: described };
      }
      ctx.log(`conformance: ${report.verdict} in ${wallSeconds.toFixed(1)} s with the clock`);
      // The same run waiting its windows out, as against an implementation without a clock.
      const withoutClock = await timed(false);
      const without: NonNullable<ConformanceSection['withoutClock']> =
        typeof withoutClock === 'string' || withoutClock.report === 'timeout'
          ? { reason: typeof withoutClock === 'string' ? withoutClock : `did not finish within ${ctx.sizes.conformanceTimeoutSeconds} s` }
          : {
              wallSeconds: withoutClock.wallSeconds,
              verdict: withoutClock.report.verdict,
              startSecondOfMinute: withoutClock.startSecondOfMinute,
              failed: failedChecks(withoutClock.report),
            };
      if (without.wallSeconds !== undefined) ctx.log(`conformance: ${without.verdict} in ${without.wallSeconds.toFixed(1)} s without the clock`);
      const slowest = [...report.results]
        .sort((a, b) => b.durationMs - a.durationMs)
        .slice(0, 5)
        .map((r) => ({ id: r.id, seconds: r.durationMs / 1000, outcome: r.outcome }));
      return {
        status: 'measured',
        wallSeconds,
        startSecondOfMinute,
        verdict: report.abort ? `${report.verdict} (${report.abort.kind}: ${report.abort.message})` : report.verdict,
        counts: report.counts,
        slowest,
        clockChecks: CLOCK_CHECKS.map((id) => ({ id, outcome: report.results.find((r) => r.id === id)?.outcome ?? 'absent' })),
        failed: failedChecks(report),
        withoutClock: without,
        server: described,
      };
    } finally {
      await proc.stop();
    }
  } finally {
    await ctx.drop(store);
  }
}
