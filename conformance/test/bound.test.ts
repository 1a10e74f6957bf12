// A run ends within the bound it states, whatever the service does. Through the real
// command line, as a CI job meets it: each service that once kept a run going must
// now end it failing on the check of the rule it breaks, within the bound printed in
// the start line (the one its timings make), with its reports written; and a run cut
// short by its bound reports the checks it did not reach. Then the bound's arithmetic:
// what the implementation profile's timings and the flags that override them make of it.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { allowances, laneSeconds, planBound, sharedJobsSeconds, statedBound } from '../src/bound.ts';
import type { Check } from '../src/check.ts';
import { CHECKS } from '../src/checks/index.ts';
import { CONTRACT_PROFILE, parseProfile, ProfileError, UNSTATED_TIMINGS } from '../src/implementation/profile.ts';
import { firstRetryLatestSeconds, resolveOptions, type RunOptions } from '../src/options.ts';
import type { Report } from '../src/report/model.ts';
import { selectChecks, startsJobs } from '../src/selection.ts';
import { UNENDING } from './fixtures/broken.ts';
import { SECRET, startFixture, type Fixture } from './fixtures/reference.ts';

const CLI = new URL('../src/cli.ts', import.meta.url).pathname;
const LAST_LINE = /^\d+ passed, \d+ failed, \d+ skipped$/;
const STATED = /ends within (\d+) s/;
/** The CLI gives its output 2 s to drain, then exits; a second more for a loaded machine. */
const VERDICT_TO_EXIT_MS = 3_000;
/** Past this the child is killed and the test fails: the vitest timeout comes after it. */
const KILL_AFTER_MS = 140_000;

// The runs wait on timers (jobs, webhook retries, windows), so they can share the CPU.
vi.setConfig({ maxConcurrency: 5 });

interface Ended {
  code: number | null;
  stdout: string;
  /** The bound the start line stated, in seconds. */
  bound: number;
  /** From the start line (the bound's start) to the exit. */
  afterStartMs: number;
  /** From the summary's last line (the verdict is out) to the exit. */
  afterVerdictMs: number;
  last: string;
}

/** Runs the CLI; times it from the line that states the bound to the process's exit. */
function cli(args: string[]): Promise<Ended> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, NO_COLOR: '1' } });
    let stdout = '';
    let startedAt: number | undefined;
    let verdictAt: number | undefined;
    const kill = setTimeout(() => child.kill('SIGKILL'), KILL_AFTER_MS);
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      if (startedAt === undefined && STATED.test(stdout)) startedAt = Date.now();
      if (verdictAt === undefined && /^\d+ passed, \d+ failed, \d+ skipped$/m.test(stdout)) verdictAt = Date.now();
    });
    child.stderr.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.on('exit', (code) => {
      clearTimeout(kill);
      const now = Date.now();
      resolve({ code, stdout, bound: Number(STATED.exec(stdout)?.[1]), afterStartMs: now - (startedAt ?? -Infinity), afterVerdictMs: now - (verdictAt ?? -Infinity), last: stdout.trimEnd().split('\n').at(-1) ?? '' });
    });
  });
}

/** The options of a run against the fixture with its timings, as the flags and the --config file of argsFor give them. */
function optionsFor(fixture: Fixture, config: Partial<RunOptions> = {}): RunOptions {
  const { limits, webhookRetryDelaysMs } = fixture.config;
  return {
    baseUrl: fixture.baseUrl,
    apiKey: fixture.keys.main,
    secondKey: fixture.keys.second,
    emptyKey: fixture.keys.empty,
    signingSecret: SECRET,
    profile: 'contract',
    pollInitialDelayMs: 50,
    pollMaxDelayMs: 200,
    terminalObserveSeconds: 0.6,
    // The fixture answers in milliseconds: a smaller request timeout keeps the bound near what a run takes.
    requestTimeoutMs: 10_000,
    expectedLimits: { generation: [limits.generation, limits.day.generation], read: [limits.read, limits.day.read] },
    windowSeconds: [limits.windowMs / 1000, 86_400],
    jobTimeoutSeconds: 10,
    webhookFirstRetrySeconds: webhookRetryDelaysMs[0]! / 1000,
    webhookRetryTimeoutSeconds: 3,
    webhookRetries: { delaysSeconds: webhookRetryDelaysMs.map((ms) => ms / 1000), jitter: 0 },
    ...config,
  };
}

/** The fixture's timings and keys, as flags and a --config file, with reports into `dir`. */
function argsFor(fixture: Fixture, dir: string, config: Partial<RunOptions> = {}): string[] {
  const file = join(dir, 'config.json');
  const options = optionsFor(fixture, config);
  const { baseUrl, apiKey, secondKey, emptyKey, signingSecret, profile, jobTimeoutSeconds, webhookFirstRetrySeconds, webhookRetryTimeoutSeconds, webhookRetries, ...rest } = options;
  writeFileSync(file, JSON.stringify(rest));
  return [
    '--base-url', baseUrl,
    '--api-key', apiKey, '--second-key', secondKey!, '--empty-key', emptyKey!, '--signing-secret', signingSecret!,
    '--profile', profile!,
    '--config', file,
    '--job-timeout', String(jobTimeoutSeconds),
    '--webhook-first-retry', String(webhookFirstRetrySeconds),
    '--webhook-retry-timeout', String(webhookRetryTimeoutSeconds),
    '--webhook-retries', webhookRetries!.delaysSeconds.join(','),
    '--report-json', join(dir, 'report.json'),
    '--report-junit', join(dir, 'report.xml'),
    '--report-md', join(dir, 'report.md'),
  ];
}

/** The bound a run of these options states, the fixture having its sandbox clock. */
function boundOf(options: RunOptions): number {
  const resolved = resolveOptions(options);
  const selected = selectChecks(CHECKS, resolved);
  return statedBound(selected, resolved, true, startsJobs(selected, resolved)).seconds;
}

function reportIn(dir: string): Report {
  expect(existsSync(join(dir, 'report.json')), 'the JSON report was written').toBe(true);
  return JSON.parse(readFileSync(join(dir, 'report.json'), 'utf8')) as Report;
}

describe('the bound of a run, through the CLI', () => {
  it.concurrent.each(UNENDING.map((broken) => [broken.name, broken] as const))(
    'when the service has %s, then the run fails and the process exits within the bound it stated, its reports written',
    async (_name, broken) => {
      const fixture = await startFixture({ flaws: broken.flaws });
      const dir = mkdtempSync(join(tmpdir(), 'conformance-bound-'));
      try {
        const ended = await cli([...argsFor(fixture, dir), ...broken.args]);
        expect(ended.bound, ended.stdout).toBeGreaterThan(0);
        // The bound stated is the one its timings make, not a figure of its own.
        const only = broken.args.includes('--only') ? broken.args[broken.args.indexOf('--only') + 1]!.split(',') : [];
        expect(ended.bound).toBe(boundOf(optionsFor(fixture, { only })));
        expect(ended.afterStartMs, `exited ${(ended.afterStartMs / 1000).toFixed(1)} s after stating ${ended.bound} s\n${ended.stdout}`).toBeLessThanOrEqual(ended.bound * 1000);
        expect(ended.code, ended.stdout).toBe(1);
        expect(ended.last).toMatch(LAST_LINE);
        // The verdict is the end: nothing the run left open keeps the process going.
        expect(ended.afterVerdictMs).toBeLessThan(VERDICT_TO_EXIT_MS);
        const report = reportIn(dir);
        expect(report.verdict).toBe('fail');
        // Failed on the rule it breaks, as soon as that was seen: not by reaching the bound.
        expect(report.results.find((r) => r.id === broken.catches)?.outcome, ended.stdout).toBe('failed');
        expect(report.bound).toMatchObject({ seconds: ended.bound, reached: false });
        expect(report.results.length).toBeGreaterThan(0);
        // Every check that ran was held to a limit, and none was allowed past the bound.
        for (const result of report.results.filter((r) => r.limitSeconds !== undefined)) expect(result.limitSeconds).toBeLessThanOrEqual(ended.bound);
        expect(readFileSync(join(dir, 'report.xml'), 'utf8')).toContain(`<property name="bound_seconds" value="${ended.bound}"/>`);
        expect(readFileSync(join(dir, 'report.md'), 'utf8')).toContain(`Bound: ${ended.bound} s, stated before the first request`);
      } finally {
        await fixture.close();
      }
    },
    150_000,
  );

  it('when the run reaches a bound set below what its checks need, then it stops there, reports the checks it did not finish as not run, and exits 1', async () => {
    // A correct service whose jobs take 5 s each (within the run's 10 s): an avatar, then
    // its video, is past 8 s however fast the machine. (A broken one now fails sooner.)
    const fixture = await startFixture({ config: { job: { queuedMs: 1000, processingMs: 4000 } } });
    const dir = mkdtempSync(join(tmpdir(), 'conformance-bound-'));
    try {
      const ended = await cli(argsFor(fixture, dir, { maxRunSeconds: 8 }));
      expect(ended.bound, ended.stdout).toBe(8);
      expect(ended.afterStartMs, ended.stdout).toBeLessThanOrEqual(8_000);
      expect(ended.code, ended.stdout).toBe(1);
      expect(ended.stdout).toContain('The run reached its bound of 8 s');
      const report = reportIn(dir);
      expect(report.bound).toMatchObject({ seconds: 8, reached: true, cappedBy: 'max-run-seconds' });
      const notRun = report.results.filter((r) => r.outcome === 'skipped' && r.reason?.includes('the run reached its bound of 8 s'));
      expect(notRun.length, JSON.stringify(report.results.map((r) => [r.id, r.outcome, r.reason]))).toBeGreaterThan(0);
      // Every selected check is in the report, run or not.
      expect(report.results.map((r) => r.id)).toContain('contract.problem-details');
      expect(report.counts.requiredNotRun).toBeGreaterThan(0);
    } finally {
      await fixture.close();
    }
  }, 60_000);
});

describe("the bound's arithmetic, from the implementation profile's timings", () => {
  const base: RunOptions = { baseUrl: 'http://127.0.0.1:9', apiKey: 'sk_test_x', secondKey: 'sk_test_y', emptyKey: 'sk_test_z', signingSecret: 'whsec_x', profile: 'core', seed: 1 };
  const plan = (options: RunOptions, clock = true) => {
    const resolved = resolveOptions(options);
    const selected = selectChecks(CHECKS, resolved);
    return planBound(selected, resolved, clock, startsJobs(selected, resolved));
  };
  const withTimings = (timings: Record<string, number> | null) => parseProfile({ profile: 1, name: 'timed', clock: { advance: { path: '/v1/test_helpers/clock/advance', body: { seconds: '{{seconds}}' } } }, timings });

  it("when the contract's timings are the profile's, then the shared jobs take the avatar, then the longer of its video with the read that sees it end and its retry", () => {
    const { jobSeconds, deliverySeconds } = CONTRACT_PROFILE.timings!;
    const options = resolveOptions(base);
    const a = allowances(options, true);
    expect(a.job('avatar')).toBe(jobSeconds.avatar);
    expect(a.job('avatar_video')).toBe(jobSeconds.avatar_video);
    expect(a.delivery).toBe(deliverySeconds);
    const retry = firstRetryLatestSeconds(options) + 1 + deliverySeconds;
    expect(a.retry).toBe(retry);
    // The video's webhook wakes its poll: its end is read a delivery after it at most.
    const video = jobSeconds.avatar_video + Math.min(options.pollMaxDelayMs / 1000, deliverySeconds);
    expect(sharedJobsSeconds(a)).toBe(a.window + jobSeconds.avatar + Math.max(video, deliverySeconds + retry));
    expect(plan(base).sharedSeconds).toBe(Math.ceil(sharedJobsSeconds(a)));
  });

  it('when a lane is counted, then it is two windows and, for each check, a step and its declared waits, its requests answered as a correct service answers them', () => {
    const options = resolveOptions(base);
    const a = allowances(options, true);
    const waiting: Check = { ...CHECKS[0]!, waits: (allow) => allow.job('avatar') + allow.request };
    const quick: Check = { ...CHECKS[0]!, waits: undefined };
    const one = laneSeconds([quick], 'main', a);
    expect(one - 2 * a.window).toBeGreaterThan(0);
    expect(laneSeconds([quick, waiting], 'main', a)).toBeCloseTo(2 * one - 2 * a.window + a.job('avatar') + a.request, 6);
    // Passive checks send nothing: no windows.
    expect(laneSeconds([quick], 'passive', a)).toBeLessThan(one - 2 * a.window + 1);
  });

  it("when a profile states slower jobs or deliveries, then the bound grows by what the run's course waits on them, and --job-timeout and --webhook-retry-timeout override them", () => {
    const fast = withTimings({ avatar: 4, avatar_video: 20, delivery: 2 });
    const slowVideos = withTimings({ avatar: 4, avatar_video: 60, delivery: 2 });
    const slowDeliveries = withTimings({ avatar: 4, avatar_video: 20, delivery: 12 });
    const bound = plan({ ...base, implementation: fast });
    // The run's video is awaited with the shared jobs.
    expect(plan({ ...base, implementation: slowVideos }).seconds).toBeGreaterThanOrEqual(bound.seconds + 40);
    expect(plan({ ...base, implementation: slowDeliveries }).seconds).toBeGreaterThan(bound.seconds + 10);
    // The flags are the profile's timings given on the command line.
    expect(resolveOptions({ ...base, implementation: slowVideos, jobTimeoutSeconds: 20 }).jobSeconds).toEqual({ avatar: 20, avatar_video: 20 });
    expect(plan({ ...base, implementation: slowDeliveries, webhookRetryTimeoutSeconds: 2 }).seconds).toBe(bound.seconds);
  });

  it('when the profile states no timings, then the runner allows what any service might take, and the bound is long', () => {
    const untimed = withTimings(null);
    expect(resolveOptions({ ...base, implementation: untimed }).jobSeconds).toEqual(UNSTATED_TIMINGS.jobSeconds);
    expect(resolveOptions({ ...base, implementation: untimed }).webhookRetryTimeoutSeconds).toBe(UNSTATED_TIMINGS.deliverySeconds);
    expect(plan({ ...base, implementation: untimed }).seconds).toBeGreaterThan(plan(base).seconds + 2 * 300);
  });

  it('when the profile names a sandbox clock, then the stated bound counts on it; without one, or with --no-clock, windows are waited out in it', () => {
    const resolved = resolveOptions(base);
    const selected = selectChecks(CHECKS, resolved);
    expect(statedBound(selected, resolved, true, true).seconds).toBe(plan(base, true).seconds);
    expect(statedBound(selected, resolved, false, true).seconds).toBe(plan(base, false).seconds);
    expect(plan(base, false).seconds).toBeGreaterThan(plan(base, true).seconds);
  });

  it('when a check alone is allowed more than the run counts, then its limit still ends with the run', () => {
    const bound = plan({ ...base, maxRunSeconds: 20 });
    expect(Math.max(...Object.values(bound.checks))).toBeLessThanOrEqual(20);
  });

  it('when a timing breaks a rule, then the profile is refused naming the member and the rule', () => {
    expect(() => withTimings({ avatar: 0, avatar_video: 8, delivery: 2 })).toThrow(ProfileError);
    expect(() => withTimings({ avatar: 0, avatar_video: 8, delivery: 2 })).toThrow(/timings\/avatar|timings\.avatar/);
    expect(() => withTimings({ avatar: 4, avatar_video: 8 })).toThrow(/timings.*delivery/);
  });
});
