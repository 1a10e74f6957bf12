// Every script of package.json answers `npm run <script> -- --help` with its usage on
// stdout and exit 0, before it does anything: no stack trace, no server started, no file
// written. Each runs as npm runs it (the script's command with the arguments appended,
// through sh, node_modules/.bin first on PATH), without npm's own start-up.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..');
const SCRIPTS = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;

/** Scripts that are other tools' command lines: their --help is those tools' own, or theirs to run. */
const OTHER_TOOLS: Record<string, string> = {
  lint: "Redocly's CLI (redocly lint): its --help is Redocly's",
  typecheck: "TypeScript's compiler (tsc): its --help is tsc's",
  test: 'the whole suite in turn (lint, check:generated, typecheck, then vitest run, which would take the --help): each part answers for itself',
};

const run = promisify(execFile);

describe('npm run <script> -- --help', () => {
  const ours = Object.keys(SCRIPTS).filter((name) => !(name in OTHER_TOOLS));

  it('leaves out only the scripts that are other tools, each with its reason', () => {
    for (const name of Object.keys(OTHER_TOOLS)) expect(SCRIPTS, name).toHaveProperty(name);
    expect(ours.length).toBeGreaterThan(10);
  });

  it.concurrent.each(ours)('%s prints its usage and exits 0', async (name) => {
    const { stdout } = await run('sh', ['-c', `${SCRIPTS[name]} --help`], {
      cwd: ROOT,
      // PORT and the rest unset: a script that ignored --help would start on its defaults, and the test would see that.
      env: { PATH: `${join(ROOT, 'node_modules', '.bin')}:${process.env.PATH}`, HOME: process.env.HOME ?? '/tmp', NO_COLOR: '1' },
      timeout: 30_000,
    });
    expect(stdout).toMatch(/^usage:/im);
    // The usage names the command as a user types it.
    expect(stdout).toMatch(new RegExp(`npm (run ${name.replace(/[:]/g, '\\$&')}|${name === 'start' ? 'start' : 'run'})|node |avatar-conformance`));
  }, 40_000);
});
