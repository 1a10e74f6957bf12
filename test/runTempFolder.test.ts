// The run's temporary files go in one folder of its own, removed when the run passes and
// kept when its tests fail (test/support/runTempFolder.ts, used by vitest.config.ts).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RUN_FOLDER_MODE, RUN_FOLDER_PREFIX } from './support/runTempFolder.ts';

const MODULE = join(import.meta.dirname, 'support', 'runTempFolder.ts');

/**
 * A process that takes a run folder inside `parent`, makes a folder in it as a test does
 * and a file in it from a child process as a server does, then exits with `code`.
 */
function runProcess(parent: string, code: number) {
  const script = `
    import { useRunTempFolder } from ${JSON.stringify(MODULE)};
    import { execFileSync } from 'node:child_process';
    import { mkdtempSync } from 'node:fs';
    import { tmpdir } from 'node:os';
    import { join } from 'node:path';
    useRunTempFolder();
    mkdtempSync(join(tmpdir(), 'a-test-'));
    execFileSync('sh', ['-c', 'mkdir "$TMPDIR/a-child"']);
    process.exitCode = ${code};
  `;
  return spawnSync(process.execPath, ['--input-type=module', '-e', script], { env: { ...process.env, TMPDIR: parent }, encoding: 'utf8' });
}

describe("the run's temporary folder", () => {
  it('is where this test run puts its temporary files', () => {
    expect(basename(tmpdir())).toMatch(new RegExp(`^${RUN_FOLDER_PREFIX}`));
    expect(statSync(tmpdir()).mode & 0o777).toBe(RUN_FOLDER_MODE);
  });

  it('is removed, with what the run and its children made in it, when the run passes', () => {
    const parent = mkdtempSync(join(tmpdir(), 'parent-'));

    const run = runProcess(parent, 0);

    expect(run.status, run.stderr).toBe(0);
    expect(readdirSync(parent)).toEqual([]);
  });

  it('is removed when the run was stopped by hand (Ctrl-C ends a watch session with 130)', () => {
    const parent = mkdtempSync(join(tmpdir(), 'parent-'));

    const run = runProcess(parent, 130);

    expect(run.status).toBe(130);
    expect(readdirSync(parent)).toEqual([]);
  });

  it('is kept, and named, when the run fails', () => {
    const parent = mkdtempSync(join(tmpdir(), 'parent-'));

    const run = runProcess(parent, 1);

    const [folder] = readdirSync(parent);
    expect(run.status).toBe(1);
    expect(folder).toMatch(new RegExp(`^${RUN_FOLDER_PREFIX}`));
    expect(readdirSync(join(parent, folder!)).sort()).toEqual(['a-child', expect.stringMatching(/^a-test-/)]);
    expect(run.stderr).toContain(`The run's temporary files are kept in ${join(parent, folder!)}`);
  });
});
