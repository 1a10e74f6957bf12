// Global setup of the "scaled" Vitest project: the PostgreSQL and Redis its tests need.
// TEST_DATABASE_URL and TEST_REDIS_URL name servers to use as they are; otherwise this
// starts a PostgreSQL and a Redis of the run's own, each on a port the OS gives, with a
// data folder in the temp dir, and stops both at the end. A fresh machine has neither
// running, and a developer's may run its own on the standard ports: the run touches
// neither. Where the binaries are missing it fails in one line that says what to
// install; it never lets the scaled tests pass by skipping them. Each server takes a
// password made for the run (another user of the machine could otherwise use a
// superuser PostgreSQL on a loopback port), and dies with the run that started it.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    testDatabaseUrl: string;
    testRedisUrl: string;
  }
}

const INSTALL_HINT =
  'install PostgreSQL and Redis (Debian: apt-get install -y postgresql redis-server; `npm test` does it by itself as root), or set TEST_DATABASE_URL and TEST_REDIS_URL to servers of your own';
/** A server that has not said it is ready by then will not: its output is shown. */
const START_LIMIT_MS = 60_000;
/** A port the OS gave can be taken again before the server binds it; a few tries settle it. */
const BIND_TRIES = 5;

interface Started {
  url: string;
  stop(): Promise<void>;
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const fromEnv = { db: process.env.TEST_DATABASE_URL, redis: process.env.TEST_REDIS_URL };
  const started: Started[] = [];
  const stopAll = async () => {
    for (const s of started.splice(0).reverse()) await s.stop();
  };
  try {
    const db = fromEnv.db ? { url: fromEnv.db } : await startOwn('PostgreSQL', startPostgres, started);
    const redis = fromEnv.redis ? { url: fromEnv.redis } : await startOwn('Redis', startRedis, started);
    project.provide('testDatabaseUrl', db.url);
    project.provide('testRedisUrl', redis.url);
  } catch (error) {
    await stopAll();
    throw error;
  }
  return stopAll;
}

async function startOwn(name: string, start: (port: number) => Promise<Started>, started: Started[]): Promise<Started> {
  let last: Error | undefined;
  for (let attempt = 0; attempt < BIND_TRIES; attempt++) {
    try {
      const server = await start(await freePort());
      started.push(server);
      return server;
    } catch (error) {
      last = error as Error;
      if (!(error instanceof PortTaken)) break;
    }
  }
  throw new Error(`The scaled tests could not start ${name}: ${last?.message}`);
}

class PortTaken extends Error {}

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve, reject) => probe.once('error', reject).listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

/** The directory of a PostgreSQL installation's server binaries: PATH first, then Debian's layout. */
function postgresBinDir(): string | undefined {
  const fromPath = spawnSync('pg_config', ['--bindir'], { encoding: 'utf8' });
  if (fromPath.status === 0 && existsSync(join(fromPath.stdout.trim(), 'initdb'))) return fromPath.stdout.trim();
  const debian = '/usr/lib/postgresql';
  if (!existsSync(debian)) return undefined;
  const versions = readdirSync(debian).filter((v) => existsSync(join(debian, v, 'bin', 'initdb'))).sort((a, b) => Number(b) - Number(a));
  return versions.length ? join(debian, versions[0]!, 'bin') : undefined;
}

function which(command: string): string | undefined {
  const found = spawnSync('sh', ['-c', `command -v ${command}`], { encoding: 'utf8' });
  return found.status === 0 ? found.stdout.trim() : undefined;
}

/**
 * PostgreSQL refuses to run as root; a root test run (CI, a container) runs it as the
 * `postgres` user Debian's package creates, or as `nobody`. setpriv execs in place, so
 * signals reach the server itself.
 */
function asUnprivileged(dir: string): { wrap: (cmd: string, args: string[]) => [string, string[]] } {
  if (process.getuid?.() !== 0) return { wrap: killedWithRun };
  const user = spawnSync('id', ['-u', 'postgres']).status === 0 ? 'postgres' : 'nobody';
  const uid = Number(spawnSync('id', ['-u', user], { encoding: 'utf8' }).stdout.trim());
  const gid = Number(spawnSync('id', ['-g', user], { encoding: 'utf8' }).stdout.trim());
  chownSync(dir, uid, gid);
  return { wrap: (cmd, args) => ['setpriv', ['--pdeathsig', 'KILL', `--reuid=${uid}`, `--regid=${gid}`, '--clear-groups', cmd, ...args]] };
}

/**
 * A server dies with the process that started it, even one killed outright (an
 * out-of-memory kill, a CI time-out), which runs no teardown: setpriv's parent-death
 * signal, where setpriv is (util-linux, on every Debian).
 */
function killedWithRun(cmd: string, args: string[]): [string, string[]] {
  return HAS_SETPRIV ? ['setpriv', ['--pdeathsig', 'KILL', cmd, ...args]] : [cmd, args];
}
const HAS_SETPRIV = spawnSync('sh', ['-c', 'command -v setpriv']).status === 0;

async function startPostgres(port: number): Promise<Started> {
  const bin = postgresBinDir();
  if (!bin) throw new Error(`no PostgreSQL server binaries (initdb, postgres) were found: ${INSTALL_HINT}`);
  const dir = mkdtempSync(join(tmpdir(), 'avatar-test-pg-'));
  const data = join(dir, 'data');
  const user = asUnprivileged(dir);
  const password = randomBytes(18).toString('hex');
  const pwfile = join(dir, 'pwfile');
  writeFileSync(pwfile, `${password}\n`, { mode: 0o600 });
  if (process.getuid?.() === 0) chownSync(pwfile, ...ownerOf(dir));
  const [initCmd, initArgs] = user.wrap(join(bin, 'initdb'), ['-D', data, '-U', 'postgres', '--auth=scram-sha-256', `--pwfile=${pwfile}`, '--no-sync', '-E', 'UTF8', '--locale=C']);
  const init = spawnSync(initCmd, initArgs, { encoding: 'utf8' });
  if (init.status !== 0) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`initdb failed (exit ${init.status}): ${lastLines(`${init.stdout}${init.stderr}${init.error?.message ?? ''}`)}`);
  }
  // Durability is not what these tests are about: skipping fsync keeps schema-per-test cheap.
  const [cmd, args] = user.wrap(join(bin, 'postgres'), [
    '-D', data, '-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-c', `unix_socket_directories=${dir}`,
    '-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off', '-c', 'max_connections=200',
  ]);
  const child = spawnKept(cmd, args, dir);
  try {
    await readyOrExit(child, /database system is ready to accept connections/, /could not bind|Address already in use/);
  } catch (error) {
    removeFolder(dir);
    throw error;
  }
  const url = `postgres://postgres:${password}@127.0.0.1:${port}/postgres`;
  return { url, stop: () => stopChild(child, 'SIGINT').then(() => removeFolder(dir)) };
}

async function startRedis(port: number): Promise<Started> {
  const server = which('redis-server');
  if (!server) throw new Error(`no redis-server binary was found: ${INSTALL_HINT}`);
  const dir = mkdtempSync(join(tmpdir(), 'avatar-test-redis-'));
  const password = randomBytes(18).toString('hex');
  const [cmd, args] = killedWithRun(server, ['--port', String(port), '--bind', '127.0.0.1', '--requirepass', password, '--save', '', '--appendonly', 'no', '--dir', dir, '--daemonize', 'no']);
  const child = spawnKept(cmd, args, dir);
  try {
    await readyOrExit(child, /Ready to accept connections/, /Address already in use/);
  } catch (error) {
    removeFolder(dir);
    throw error;
  }
  return { url: `redis://:${password}@127.0.0.1:${port}`, stop: () => stopChild(child, 'SIGTERM').then(() => removeFolder(dir)) };
}

/**
 * A server child that does not outlive the test run, nor its data folder: an interrupted
 * run (Ctrl-C) exits without its teardown, and a folder a run leaves is 40 MB of cluster.
 */
function spawnKept(cmd: string, args: string[], dir: string): ChildProcess {
  const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const kill = () => {
    child.kill('SIGKILL');
    try {
      removeFolder(dir);
    } catch {
      // A dying server may still hold a file; the folder is in the OS's temp dir.
    }
  };
  process.once('exit', kill);
  child.once('exit', () => process.off('exit', kill));
  return child;
}

function removeFolder(dir: string): void {
  rmSync(dir, { recursive: true, force: true, maxRetries: 5 });
}

function ownerOf(dir: string): [number, number] {
  const [uid, gid] = spawnSync('stat', ['-c', '%u %g', dir], { encoding: 'utf8' }).stdout.trim().split(' ').map(Number);
  return [uid!, gid!];
}

/** Resolves when the child prints its ready line; rejects with its output when it exits or stalls first. */
function readyOrExit(child: ChildProcess, ready: RegExp, portTaken: RegExp): Promise<void> {
  let output = '';
  return new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`not ready within ${START_LIMIT_MS / 1000} s: ${lastLines(output)}`));
    }, START_LIMIT_MS);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (ready.test(output)) {
        clearTimeout(timer);
        child.stdout?.off('data', onData).resume();
        child.stderr?.off('data', onData).resume();
        resolve();
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(new Error(`${error.message}: ${INSTALL_HINT}`));
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      const message = `exited (code ${code}) before it was ready: ${lastLines(output)}`;
      reject(portTaken.test(output) ? new PortTaken(message) : new Error(message));
    });
  });
}

async function stopChild(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill(signal);
  const force = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(force);
}

function lastLines(text: string): string {
  return text.trim().split('\n').slice(-5).join(' | ') || '(no output)';
}
