// `npm run test:repeat`: the suite run several times under load, and every test that
// failed in any run listed with how often. Driven here on a two-test suite of its own
// (test/support/repeat) whose second test fails on every other run.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parse } from '../scripts/test-repeat.ts';

const ROOT = join(import.meta.dirname, '..');
const FLAKY_SUITE = ['--config', 'test/support/repeat/vitest.config.ts'];

const folders: string[] = [];
afterEach(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

function repeat(args: string[]) {
  const counterDir = mkdtempSync(join(tmpdir(), 'test-repeat-counter-'));
  folders.push(counterDir);
  const run = spawnSync(process.execPath, ['scripts/test-repeat.ts', ...args], { cwd: ROOT, encoding: 'utf8', env: { ...process.env, REPEAT_COUNTER_DIR: counterDir }, timeout: 120_000 });
  return { code: run.status, out: run.stdout, err: run.stderr };
}

describe('npm run test:repeat', () => {
  it('when a test fails in some runs only, then it is listed once with the runs it failed in, and the command fails', () => {
    const { code, out } = repeat(['--times', '2', '--busy', '1', ...FLAKY_SUITE]);

    expect(out).toContain('1 busy loop');
    expect(out).toMatch(/run 2\/2: 2 passed, 0 failed, [\d.]+ s\n\n/);
    // The failed run kept its temporary files and the command says where; the passing one did not.
    const kept = /run 1\/2: [^\n]*\n(?: {4}✗[^\n]*\n)+ {4}its temporary files are kept in (\S+)\n/.exec(out)?.[1];
    expect(kept && existsSync(kept), out).toBe(true);
    expect(out).toContain('1/2  test/support/repeat/flaky.check.ts > fails on every other run');
    expect(out).toContain('runs 1: AssertionError: run 1 is odd');
    expect(out).not.toContain('> always holds');
    expect(out.trim().split('\n').at(-1)).toBe('2 runs: 1 test failed in at least one');
    expect(code).toBe(1);
  }, 120_000);

  it('when the one run it makes is a run the flaky test passes in, then nothing is listed and it succeeds', () => {
    const { code, out } = repeat(['--times', '1', '--busy', '0', ...FLAKY_SUITE, '-t', 'always holds']);

    expect(out.trim().split('\n').at(-1)).toBe('1 runs: 0 tests failed in at least one');
    expect(code).toBe(0);
  }, 60_000);

  it('when run on the project\'s own configuration, then it reads each run\'s report where it asked Vitest to write it', () => {
    const { code, out } = repeat(['--times', '1', '--busy', '0', '--project', 'embedded', 'test/architecture.test.ts']);

    expect(out).toMatch(/run 1\/1: \d+ passed, 0 failed/);
    expect(out).not.toContain('no report');
    expect(code).toBe(0);
  }, 60_000);

  it('when a flag is out of range, then it names the flag and the rule, exit 2, and runs nothing', () => {
    const { code, out, err } = repeat(['--times', '0']);

    expect(err).toContain('--times must be a whole number of 1 or more (was "0")');
    expect(out).toBe('');
    expect(code).toBe(2);
  });

  it('reads its own options first and hands everything from the first other argument to Vitest', () => {
    expect(parse(['--times', '4', '--busy=0', 'server/test/a.test.ts', '--times', '9'])).toEqual({ times: 4, busy: 0, reportDir: undefined, vitestArgs: ['server/test/a.test.ts', '--times', '9'] });
    expect(parse(['--', '--project', 'scaled'])).toMatchObject({ times: 3, vitestArgs: ['--project', 'scaled'] });
    expect(parse(['-h'])).toBe('help');
  });
});
