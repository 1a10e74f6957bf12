// One folder for every temporary file a test run makes. The suite's tests make folders
// with mkdtemp(tmpdir()), and so do the processes they start (servers and their renders,
// the runner's reports, Chromium's profiles, PostgreSQL's data): each run left dozens in
// /tmp, and a developer who runs the suite often gathered thousands. Rather than ask each
// test (and each child) to clean up after itself, the run points TMPDIR, which
// os.tmpdir() and the tools it starts read, at a folder of its own, inside the TMPDIR it
// was given, and removes that folder when it ends. A run whose tests failed keeps it and
// says where, so that what a failing test left can be looked at.
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const RUN_FOLDER_PREFIX = 'avatar-test-run-';
export const RUN_FOLDER_MODE = 0o711;
/**
 * The exit code of a run whose tests failed (or could not run): Vitest's. Any other end
 * removes the folder: a pass, and a run stopped by hand (Ctrl-C ends a watch session, or
 * an interrupted run, with 130), which has no failure to look at.
 */
const FAILED_RUN = 1;
const KEPT = "The run's temporary files are kept in ";

/**
 * Makes the run's folder, points TMPDIR at it for this process and every process started
 * from it, and removes it at exit; a run whose tests failed keeps it, with a line on
 * stderr naming it (keptFolderIn reads that line). Returns its path.
 */
export function useRunTempFolder(): string {
  const folder = mkdtempSync(join(tmpdir(), RUN_FOLDER_PREFIX));
  // Others may pass through it but not list it: a run as root starts PostgreSQL as its own
  // user, which must reach the data folder made for it in here.
  chmodSync(folder, RUN_FOLDER_MODE);
  process.env.TMPDIR = folder;
  process.once('exit', (code) => {
    if (code === FAILED_RUN) {
      process.stderr.write(`${KEPT}${folder}\n`);
      return;
    }
    // Never throws: the exit listeners after this one (a PostgreSQL the run started is
    // killed by one) must still run. A process still writing in the folder can make a
    // removal fail (ENOTEMPTY); it is tried again, then what is left is said.
    try {
      rmSync(folder, { recursive: true, force: true, maxRetries: 3, retryDelay: 50 });
    } catch (error) {
      process.stderr.write(`The run's temporary folder ${folder} could not be removed: ${(error as Error).message}\n`);
    }
  });
  return folder;
}

/** The folder a failed run said it kept, read from its output; undefined when it kept none. */
export function keptFolderIn(output: string): string | undefined {
  const line = output.split('\n').find((l) => l.startsWith(KEPT));
  return line?.slice(KEPT.length).trim();
}
