// `node scripts/conformance-bound.ts [--runs K] [-- <runner flags>]`: how much the bound a
// run states promises. It runs the runner K times (default 3) against this checkout's
// server, each on a fresh store made as `npm run conformance:local` makes it, and prints
// for each the bound its start line stated, how long the run took (the report's
// duration) and the ratio of the two, then the largest ratio. The bound is what a correct
// implementation with its profile's timings needs (conformance/src/bound.ts); the project
// holds it to at most MAX_RATIO times what a run against this correct server takes, so
// that a CI job can plan on it. Exits 1 when a run did not pass or a ratio is above that,
// 3 when the server did not start. A measurement, never a test: a timed test would fail
// on a loaded machine for what is not a fault.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Report } from '../conformance/src/report/model.ts';
import { ROOT } from './bench/procs.ts';
import { makeAccounts, RUNNER, startServer, stopServer, type RunningServer } from './conformance-server.ts';

const NAME = 'conformance-bound';
/** The most the stated bound may be of a correct run's duration. */
const MAX_RATIO = 5;
const DEFAULT_RUNS = 3;

interface Figures {
  verdict: string;
  boundSeconds: number;
  durationSeconds: number;
}

async function oneRun(runnerArgs: string[]): Promise<Figures> {
  const dataDir = mkdtempSync(join(tmpdir(), 'avatar-conformance-bound-'));
  const reportFile = join(dataDir, 'report.json');
  let server: RunningServer | undefined;
  try {
    const values = await makeAccounts(dataDir);
    server = await startServer(dataDir);
    const child = spawn(process.execPath, [RUNNER, '--report-json', reportFile, ...runnerArgs], { cwd: ROOT, env: { ...process.env, ...values, CONFORMANCE_BASE_URL: server.url }, stdio: 'ignore' });
    await new Promise<void>((resolve) => child.once('close', () => resolve()));
    const report = JSON.parse(readFileSync(reportFile, 'utf8')) as Report;
    return { verdict: report.verdict, boundSeconds: report.bound?.seconds ?? Number.NaN, durationSeconds: report.durationMs / 1000 };
  } finally {
    if (server) await stopServer(server);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function main(argv: string[]): Promise<number> {
  const split = argv.indexOf('--');
  const own = split === -1 ? argv : argv.slice(0, split);
  const runnerArgs = split === -1 ? [] : argv.slice(split + 1);
  const runsAt = own.indexOf('--runs');
  const runs = runsAt === -1 ? DEFAULT_RUNS : Number(own[runsAt + 1]);
  if (!Number.isInteger(runs) || runs < 1) {
    process.stderr.write(`${NAME}: --runs must be a whole number of at least 1, not ${own[runsAt + 1] ?? '(nothing)'}\n`);
    return 2;
  }
  let worst = 0;
  let failed = 0;
  for (let i = 1; i <= runs; i++) {
    let figures: Figures;
    try {
      figures = await oneRun(runnerArgs);
    } catch (error) {
      process.stderr.write(`${NAME}: run ${i} did not start: ${error instanceof Error ? error.message : String(error)}\n`);
      return 3;
    }
    const ratio = figures.boundSeconds / figures.durationSeconds;
    worst = Math.max(worst, ratio);
    if (figures.verdict !== 'pass') failed++;
    process.stdout.write(`run ${i}/${runs}: verdict ${figures.verdict}, stated ${figures.boundSeconds} s, took ${figures.durationSeconds.toFixed(1)} s, ${ratio.toFixed(2)} times\n`);
  }
  process.stdout.write(`largest ratio ${worst.toFixed(2)} (at most ${MAX_RATIO}); ${runs - failed} of ${runs} runs passed\n`);
  return failed > 0 || worst > MAX_RATIO ? 1 : 0;
}

process.exitCode = await main(process.argv.slice(2));
