// A run ends within the bound it states, whatever the service does. Through the real
// command line, as a CI job meets it: each service that once kept a run going must
// now end it failing, within the bound printed in the start line, with its reports
// written; and a run cut short by its bound reports the checks it did not reach.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import type { Report } from '../src/report/model.ts';
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

/** The fixture's timings and keys, as flags and a --config file, with reports into `dir`. */
function argsFor(fixture: Fixture, dir: string, config: Record<string, unknown> = {}): string[] {
  const file = join(dir, 'config.json');
  const { limits, webhookRetryDelaysMs } = fixture.config;
  writeFileSync(
    file,
    JSON.stringify({
      pollInitialDelayMs: 50,
      pollMaxDelayMs: 200,
      terminalObserveSeconds: 0.6,
      // The fixture answers in milliseconds: a smaller request timeout keeps the bound near what a run takes.
      requestTimeoutMs: 10_000,
      expectedLimits: { generation: [limits.generation, limits.day.generation], read: [limits.read, limits.day.read] },
      windowSeconds: [limits.windowMs / 1000, 86_400],
      ...config,
    }),
  );
  return [
    '--base-url', fixture.baseUrl,
    '--api-key', fixture.keys.main, '--second-key', fixture.keys.second, '--empty-key', fixture.keys.empty, '--signing-secret', SECRET,
    '--profile', 'contract',
    '--config', file,
    '--job-timeout', '10',
    '--webhook-first-retry', String(webhookRetryDelaysMs[0]! / 1000),
    '--webhook-retry-timeout', '3',
    '--webhook-retries', webhookRetryDelaysMs.map((ms) => ms / 1000).join(','),
    '--report-json', join(dir, 'report.json'),
    '--report-junit', join(dir, 'report.xml'),
    '--report-md', join(dir, 'report.md'),
  ];
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
        expect(ended.afterStartMs, `exited ${(ended.afterStartMs / 1000).toFixed(1)} s after stating ${ended.bound} s\n${ended.stdout}`).toBeLessThanOrEqual(ended.bound * 1000);
        expect(ended.code, ended.stdout).toBe(1);
        expect(ended.last).toMatch(LAST_LINE);
        // The verdict is the end: nothing the run left open keeps the process going.
        expect(ended.afterVerdictMs).toBeLessThan(VERDICT_TO_EXIT_MS);
        const report = reportIn(dir);
        expect(report.verdict).toBe('fail');
        expect(report.bound?.seconds).toBe(ended.bound);
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
    // Webhooks swallowed: the webhook checks wait out their timeouts, well past 8 s.
    const fixture = await startFixture({ flaws: { swallowWebhooks: true } });
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
