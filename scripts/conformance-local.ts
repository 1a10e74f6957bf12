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
import { createAccount, createWorkspace } from '../server/src/domain/accounts.ts';
import { systemClock } from '../server/src/domain/clock.ts';
import { EMBEDDED_FILE } from '../server/src/runtime.ts';
import { createEmbeddedStore } from '../server/src/storage/embedded/index.ts';
import { ROOT, SERVER_NODE_FLAGS } from './bench/procs.ts';

const SERVER = join(ROOT, 'server', 'src', 'main.ts');
const RUNNER = join(ROOT, 'conformance', 'src', 'cli.ts');
const LISTENING = /^avatar service listening on (http:\/\/\S+)$/m;
/** The runner's last line when nothing ran: scripts that read it find it here too. */
const LAST_LINE_EMPTY = '0 passed, 0 failed, 0 skipped';
/** What this script gives the runner; given again, which one is meant could not be known. */
const SUPPLIED = ['--base-url', '--api-key', '--second-key', '--empty-key', '--workspace-key', '--owner-key', '--signing-secret'];
/** Each of the two accounts with credits: a core run charges 50, with room for the contract profile and --fuzz. */
const RUN_CREDITS = 1000;
/** The owner account and its workspace each: the check that uses them makes one avatar (10). */
const WORKSPACE_CREDITS = 100;
/** The server's own settings that would point it elsewhere than the store and port made here. */
const NOT_INHERITED = ['DATABASE_URL', 'REDIS_URL', 'REDIS_PREFIX', 'PUBLIC_BASE_URL', 'ROLE'];
const SERVER_START_TIMEOUT_MS = 60_000;
/** The server hands jobs in flight back within SHUTDOWN_GRACE_MS (set below); past this it is killed. */
const SERVER_STOP_TIMEOUT_MS = 10_000;
/** The end of the server's output, kept to show when it fails. */
const OUTPUT_TAIL_CHARS = 16_000;

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

interface RunningServer {
  child: ChildProcess;
  url: string;
  exited: Promise<number | null>;
  output(): string;
}

/** The accounts a run needs, made before the server opens the store so that its first start makes none. */
async function makeAccounts(dataDir: string): Promise<Record<string, string>> {
  const store = createEmbeddedStore(join(dataDir, EMBEDDED_FILE));
  try {
    const main = await createAccount(store, systemClock, { name: 'Conformance main', monthlyCredits: RUN_CREDITS });
    const second = await createAccount(store, systemClock, { name: 'Conformance second', monthlyCredits: RUN_CREDITS });
    const empty = await createAccount(store, systemClock, { name: 'Conformance empty', monthlyCredits: 0 });
    const owner = await createAccount(store, systemClock, { name: 'Conformance owner', monthlyCredits: WORKSPACE_CREDITS });
    const workspace = await createWorkspace(store, systemClock, owner.account_id, { name: 'Conformance workspace', monthlyCredits: WORKSPACE_CREDITS });
    return {
      CONFORMANCE_API_KEY: main.api_key,
      CONFORMANCE_SIGNING_SECRET: main.signing_secret,
      CONFORMANCE_SECOND_KEY: second.api_key,
      CONFORMANCE_EMPTY_KEY: empty.api_key,
      CONFORMANCE_WORKSPACE_KEY: workspace.api_key,
      CONFORMANCE_OWNER_KEY: owner.api_key,
    };
  } finally {
    await store.close();
  }
}

function startServer(dataDir: string): Promise<RunningServer> {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of NOT_INHERITED) delete env[name];
  Object.assign(env, {
    DATA_DIR: dataDir,
    PORT: '0',
    HOST: '127.0.0.1',
    // The runner's webhook receiver listens on 127.0.0.1, which production refuses.
    SERVICE_MODE: 'sandbox',
    LOG_LEVEL: env.LOG_LEVEL || 'warn',
    SHUTDOWN_GRACE_MS: env.SHUTDOWN_GRACE_MS || '1000',
  });
  const child = spawn(process.execPath, [...SERVER_NODE_FLAGS, SERVER], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let tail = '';
  const keep = (chunk: Buffer) => {
    tail = (tail + chunk.toString('utf8')).slice(-OUTPUT_TAIL_CHARS);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => done(new Error(`the server did not say where it listens within ${SERVER_START_TIMEOUT_MS / 1000} s`)), SERVER_START_TIMEOUT_MS);
    const watch = () => {
      const found = LISTENING.exec(tail);
      if (found) done(undefined, found[1]!);
    };
    const done = (error: Error | undefined, url?: string) => {
      clearTimeout(timer);
      child.stdout!.off('data', watch);
      if (error || !url) {
        child.kill('SIGKILL');
        reject(Object.assign(error ?? new Error('no address'), { output: () => tail.trim() }));
      } else {
        resolve({ child, url, exited, output: () => tail.trim() });
      }
    };
    child.stdout!.on('data', watch);
    void exited.then((code) => done(new Error(`the server exited (code ${code}) before it listened`)));
  });
}

async function stopServer(server: RunningServer): Promise<void> {
  if (server.child.exitCode !== null || server.child.signalCode !== null) return;
  server.child.kill('SIGTERM');
  const timer = setTimeout(() => server.child.kill('SIGKILL'), SERVER_STOP_TIMEOUT_MS);
  await server.exited;
  clearTimeout(timer);
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
