// `compare <before.json> <after.json>`: what changed between two JSON reports, and an
// exit code a CI job can gate on.
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { compareCommand, compareReports } from '../src/report/compare.ts';

const CLI = new URL('../src/cli.ts', import.meta.url).pathname;

function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, NO_COLOR: '1' } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

type Outcome = 'passed' | 'failed' | 'warned' | 'skipped' | 'not_applicable';
function report(verdict: 'pass' | 'fail', outcomes: Record<string, Outcome>, optional: string[] = []) {
  return {
    tool: 'avatar-api-conformance',
    verdict,
    results: Object.entries(outcomes).map(([id, outcome]) => ({ id, title: id, area: id.split('.')[0], clauses: [], decisions: [], phase: 'main', required: !optional.includes(id), outcome, durationMs: 1 })),
  };
}

function files(...reports: unknown[]): string[] {
  const dir = mkdtempSync(join(tmpdir(), 'conformance-compare-'));
  return reports.map((value, i) => {
    const file = join(dir, `report-${i}.json`);
    writeFileSync(file, typeof value === 'string' ? value : JSON.stringify(value));
    return file;
  });
}

const BASELINE = { 'auth.key-required': 'passed', 'credits.cost': 'passed', 'webhooks.signature': 'passed', 'idempotency.retry-creates-once': 'skipped' } as const;

describe('compare', () => {
  it('when the two reports are the same, then it says nothing changed and exits 0', async () => {
    const [before, after] = files(report('pass', BASELINE), report('pass', BASELINE));
    const result = await cli(['compare', before!, after!]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('No check changed its outcome.');
    expect(result.stdout).toContain('No regression.');
  });

  it('when a check went from passed to failed, then it is listed as newly failing and the exit code is 1', async () => {
    const [before, after] = files(report('pass', BASELINE), report('fail', { ...BASELINE, 'credits.cost': 'failed' }));
    const result = await cli(['compare', before!, after!]);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain('Newly failing (1):\n  credits.cost: passed -> failed');
    expect(result.stdout).toMatch(/REGRESSION: 2 regressions: credits.cost now fails \(was passed\); the verdict went from pass to fail/);
  });

  it('when checks newly pass, appear, disappear or are skipped, then each is listed under its heading', () => {
    const { newlyPassing, newlySkipped, appeared, disappeared, regressions } = compareReports(
      report('pass', BASELINE, ['idempotency.retry-creates-once']) as never,
      report('pass', { 'auth.key-required': 'skipped', 'credits.cost': 'passed', 'idempotency.retry-creates-once': 'passed', 'lists.each-record-once': 'passed' }, ['idempotency.retry-creates-once']) as never,
    );
    expect(newlyPassing.map((c) => c.id)).toEqual(['idempotency.retry-creates-once']);
    expect(newlySkipped.map((c) => c.id)).toEqual(['auth.key-required']);
    expect(appeared.map((c) => c.id)).toEqual(['lists.each-record-once']);
    expect(disappeared.map((c) => c.id)).toEqual(['webhooks.signature']);
    // A required check that passed and no longer runs, or is gone, is a regression even when the verdict still passes.
    expect(regressions).toEqual(['auth.key-required is required and no longer runs (was passed)', 'webhooks.signature passed before and is no longer in the report']);
  });

  it('when an optional check newly warns, then it is listed as newly warned, is no regression, and the exit code is 0', async () => {
    const [before, after] = files(report('pass', BASELINE, ['idempotency.retry-creates-once']), report('pass', { ...BASELINE, 'idempotency.retry-creates-once': 'warned' }, ['idempotency.retry-creates-once']));

    const result = await cli(['compare', before!, after!]);

    expect(result.code).toBe(0);
    expect(result.stdout).toContain('Newly warned (no regression: optional, it does not decide the verdict) (1):\n  idempotency.retry-creates-once [optional]: skipped -> warned');
    expect(result.stdout).not.toContain('Newly failing');
    expect(result.stdout).toContain('No regression.');
  });

  it('when a check that warned now fails, then it is newly failing and a regression', () => {
    const comparison = compareReports(report('pass', { ...BASELINE, 'credits.cost': 'warned' }) as never, report('fail', { ...BASELINE, 'credits.cost': 'failed' }) as never);

    expect(comparison.newlyWarned).toEqual([]);
    expect(comparison.regressions).toContain('credits.cost now fails (was warned)');
  });

  it('when a file is missing or not a report, then it is a one-line usage error with exit 2', () => {
    const [good, bad] = files(report('pass', BASELINE), '{"verdict":"pass"}');
    const run = (args: string[]) => {
      let err = '';
      const code = compareCommand(args, { out: () => undefined, err: (text) => void (err += text), command: 'avatar-conformance' });
      return { code, err };
    };
    const missing = run([good!, join(tmpdir(), 'no-such-report.json')]);
    expect(missing.code).toBe(2);
    expect(missing.err).toMatch(/^usage: cannot read .*no-such-report.json: /);
    const wrong = run([good!, bad!]);
    expect(wrong.code).toBe(2);
    expect(wrong.err.trim().split('\n')).toEqual([expect.stringMatching(/is not a report of --report-json/)]);
    expect(run([good!]).code).toBe(2);
  });
});
