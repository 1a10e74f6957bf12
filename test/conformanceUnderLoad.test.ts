// `npm run conformance:under-load` refuses a bad flag before it starts anything (no busy
// loop, no server, no run), in one line naming the flag and the rule, exit 2. What it
// measures is measured by running it, never in a test.
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '..');
const SCRIPT = resolve(ROOT, 'scripts', 'conformance-under-load.ts');

function underLoad(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [SCRIPT, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((done) => child.once('close', (code) => done({ code, stdout, stderr })));
}

describe('npm run conformance:under-load, given a bad flag', () => {
  it.each([
    [['--runs', '0'], '--runs must be a whole number of 1 or more (was "0")'],
    [['--runs', '2.5'], '--runs must be a whole number of 1 or more (was "2.5")'],
    [['--busy', '-1'], '--busy must be a whole number of 0 or more (was "-1")'],
    [['--target', 'all'], '--target must be server, independent or both (was "all")'],
    [['--report-dir='], '--report-dir must name a folder (was empty)'],
    [['--loops', '2'], "Unknown option '--loops'"],
  ])('when run with %j, then its first line refuses it naming the flag and the rule, exit 2, and it runs nothing', async (args, message) => {
    const result = await underLoad(args);

    expect(result.code).toBe(2);
    expect(result.stderr.split('\n')[0]).toMatch(new RegExp(`^conformance:under-load: ${message.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
    expect(result.stdout).toBe('');
  });
});
