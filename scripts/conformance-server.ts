// A server of this checkout made for one conformance run: a new embedded store in a
// temporary folder with the accounts a run needs (one with credits, whose signing secret
// verifies the webhooks; another; one without credits; an owner account with a
// workspace of its own, for credits.workspace-charged), and the server on it as
// `npm start` runs it, on a port of 127.0.0.1 the system gives. Shared by
// `npm run conformance:local` and `npm run conformance:under-load`.
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createAccount, createWorkspace } from '../server/src/domain/accounts.ts';
import { systemClock } from '../server/src/domain/clock.ts';
import { EMBEDDED_FILE } from '../server/src/runtime.ts';
import { createEmbeddedStore } from '../server/src/storage/embedded/index.ts';
import { ROOT, SERVER_NODE_FLAGS } from './bench/procs.ts';

const SERVER = join(ROOT, 'server', 'src', 'main.ts');
/** The runner's command line, run with this Node. */
export const RUNNER = join(ROOT, 'conformance', 'src', 'cli.ts');
const LISTENING = /^avatar service listening on (http:\/\/\S+)$/m;
/** Each of the two accounts with credits: a core run charges 50, with room for the contract profile and --fuzz. */
export const RUN_CREDITS = 1000;
/** The owner account and its workspace each: the check that uses them makes one avatar (10). */
export const WORKSPACE_CREDITS = 100;
/** The server's own settings that would point it elsewhere than the store and port made here. */
const NOT_INHERITED = ['DATABASE_URL', 'REDIS_URL', 'REDIS_PREFIX', 'PUBLIC_BASE_URL', 'ROLE'];
const SERVER_START_TIMEOUT_MS = 60_000;
/** The server hands jobs in flight back within SHUTDOWN_GRACE_MS (set below); past this it is killed. */
const SERVER_STOP_TIMEOUT_MS = 10_000;
/** The end of the server's output, kept to show when it fails. */
const OUTPUT_TAIL_CHARS = 16_000;

export interface RunningServer {
  child: ChildProcess;
  url: string;
  exited: Promise<number | null>;
  output(): string;
}

/**
 * The accounts a run needs, as the runner's CONFORMANCE_* variables, made before the
 * server opens the store so that its first start makes none.
 */
export async function makeAccounts(dataDir: string): Promise<Record<string, string>> {
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

/**
 * The server on the store in `dataDir`, once it says where it listens. A server that
 * exits or stays silent first is rejected with an error whose `output()` is what it wrote.
 */
export function startServer(dataDir: string): Promise<RunningServer> {
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

export async function stopServer(server: RunningServer): Promise<void> {
  if (server.child.exitCode !== null || server.child.signalCode !== null) return;
  server.child.kill('SIGTERM');
  const timer = setTimeout(() => server.child.kill('SIGKILL'), SERVER_STOP_TIMEOUT_MS);
  await server.exited;
  clearTimeout(timer);
}
