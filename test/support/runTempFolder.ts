// One folder for every temporary file a test run makes. The suite's tests make folders
// with mkdtemp(tmpdir()), and so do the processes they start (servers and their renders,
// the runner's reports, Chromium's profiles, PostgreSQL's data): each run left dozens in
// /tmp, and a developer who runs the suite often gathered thousands. Rather than ask each
// test (and each child) to clean up after itself, the run points TMPDIR, which
// os.tmpdir() and the tools it starts read, at a folder of its own, inside the TMPDIR it
// was given, and removes that folder when it ends. A run that failed keeps it and says
// where, so that what a failing test left can be looked at.
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const RUN_FOLDER_PREFIX = 'avatar-test-run-';
export const RUN_FOLDER_MODE = 0o711;

/**
 * Makes the run's folder, points TMPDIR at it for this process and every process started
 * from it, and removes it at exit (keeps it, with a line on stderr, when the exit code is
 * not 0). Returns its path.
 */
export function useRunTempFolder(): string {
  const folder = mkdtempSync(join(tmpdir(), RUN_FOLDER_PREFIX));
  // Others may pass through it but not list it: a run as root starts PostgreSQL as its own
  // user, which must reach the data folder made for it in here; every folder in it is
  // made by mkdtemp, for its owner alone.
  chmodSync(folder, RUN_FOLDER_MODE);
  process.env.TMPDIR = folder;
  process.once('exit', (code) => {
    if (code === 0) rmSync(folder, { recursive: true, force: true });
    else process.stderr.write(`The run's temporary files are kept in ${folder}\n`);
  });
  return folder;
}
