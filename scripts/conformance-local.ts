// `npm run conformance:local [-- <runner flags>]`: the conformance runner against this
// checkout's server, with nothing to set up or paste. It makes a new embedded store in a
// temporary folder with the accounts a run needs (one with credits, whose signing
// secret verifies the webhooks; another; one without credits; an owner account with a
// workspace of its own, for credits.workspace-charged), starts the server on it
// as `npm start` does, on a port the system gives, runs the runner with those values in
// its CONFORMANCE_* variables and the flags it was given, then stops the server and
// removes the folder. A server of its own rather than the one a user may have running:
// that one's store and accounts are the user's, and a run moves its accounts' sandbox
// clocks for good. The exit code is the runner's; 2 for a flag this script supplies
// itself, 3 when the server does not start (its output is shown).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { constants, tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from './bench/procs.ts';
import { makeAccounts, RUN_CREDITS, RUNNER, startServer, stopServer, WORKSPACE_CREDITS, type RunningServer } from './conformance-server.ts';

/** The runner's last line when nothing ran: scripts that read it find it here too. */
const LAST_LINE_EMPTY = '0 passed, 0 failed, 0 skipped';
/** What this script gives the runner; given again, which one is meant could not be known. */
const SUPPLIED = ['--base-url', '--api-key', '--second-key', '--empty-key', '--workspace-key', '--owner-key', '--signing-secret'];

const USAGE = `Usage: npm run conformance:local [-- <runner flags>]

Runs the conformance runner against a server of this checkout made for the run: a new
store in a temporary folder with the accounts the runner needs, the server on a free
port of 127.0.0.1, both removed afterwards. Runner flags (--profile, --only, --report-md,
--fuzz, ...: npm run conformance -- --help) are passed on; the base URL, the keys and the
signing secret are this script's. Server settings in the environment (ENGINE_AVATAR_MS,
LOG_LEVEL, ...) reach the server, except those of another store or address.
`;

function refuse(message: string): never {
  process.stderr.write(`conformance:local: ${message}\n`);
  process.stdout.write(`${LAST_LINE_EMPTY}\n`);
  process.exit(2);
}

async function main(args: string[]): Promise<number> {
  if (args.includes('--help') || args.includes('-h')) {
    process.stdout.write(USAGE);
    return 0;
  }
  const supplied = args.find((arg) => SUPPLIED.some((flag) => arg === flag || arg.startsWith(`${flag}=`)));
  if (supplied) refuse(`${supplied.split('=')[0]} is this script's own: it runs against a server it starts. For another server: npm run conformance -- --base-url <url> ... (npm run conformance -- --help)`);

  const dataDir = mkdtempSync(join(tmpdir(), 'avatar-conformance-'));
  let server: RunningServer | undefined;
  let runner: ChildProcess | undefined;
  let interrupted: NodeJS.Signals | undefined;
  // Ctrl-C reaches the children from the terminal too; a signal sent to this process alone is passed on.
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      interrupted = signal;
      if (runner) runner.kill(signal);
      else server?.child.kill(signal);
    });
  }
  try {
    const values = await makeAccounts(dataDir);
    try {
      server = await startServer(dataDir);
    } catch (error) {
      if (interrupted) return 128 + constants.signals[interrupted];
      const output = (error as { output?: () => string }).output?.() ?? '';
      process.stderr.write(`conformance:local: ${(error as Error).message}; it wrote:\n${output || '(nothing)'}\n`);
      process.stdout.write(`${LAST_LINE_EMPTY}\n`);
      return 3;
    }
    if (interrupted) return 128 + constants.signals[interrupted];
    process.stdout.write(`conformance:local: this checkout's server on ${server.url}, on a new store in ${dataDir} with the accounts a run needs (two with ${RUN_CREDITS} credits, one without, an owner account with a workspace, ${WORKSPACE_CREDITS} each), removed afterwards\n`);
    runner = spawn(process.execPath, [RUNNER, ...args], { cwd: ROOT, env: { ...process.env, ...values, CONFORMANCE_BASE_URL: server.url }, stdio: 'inherit' });
    const code = await new Promise<number>((resolve) => runner!.once('exit', (exit, signal) => resolve(exit ?? 128 + constants.signals[signal ?? 'SIGTERM'])));
    // A server that died under the run left the runner to say "unreachable"; its own output says why.
    if (server.child.exitCode !== null && !interrupted) process.stderr.write(`conformance:local: the server stopped during the run (code ${server.child.exitCode}); it wrote:\n${server.output() || '(nothing)'}\n`);
    return code;
  } finally {
    if (server) await stopServer(server);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

process.exitCode = await main(process.argv.slice(2));
