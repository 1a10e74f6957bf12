// Child processes of the benchmark: the server (`node server/src/main.ts`), the bare Koa
// ceiling and the Prism mock each run in a process of their own, so that the load
// generator never shares their event loop. Every child is registered, stopped by its
// own pid at the end, and killed if the benchmark itself dies first.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';

export const ROOT = resolve(import.meta.dirname, '..', '..');
const SERVER_MAIN = join(ROOT, 'server', 'src', 'main.ts');
/** Node's flags for the server, as `npm start` runs it: the benchmark measures what operators run. */
export const SERVER_NODE_FLAGS: readonly string[] = (() => {
  const start = String(JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).scripts.start).split(/\s+/);
  return start.slice(start.indexOf('node') + 1, start.indexOf('server/src/main.ts'));
})();
const BARE_KOA = join(ROOT, 'scripts', 'bench', 'bare-koa.ts');
const BALANCER = join(ROOT, 'scripts', 'bench', 'balancer.ts');
// Prism's entry point run with this Node (see scripts/mock.ts: the .bin shim may pick an older Node).
const PRISM = join(ROOT, 'node_modules', '@stoplight', 'prism-cli', 'dist', 'index.js');
const BUNDLE = join(ROOT, 'generated', 'openapi.json');

// Enough for the tail of a --trace-gc log (memory diagnostics) as well as for error messages.
const OUTPUT_TAIL_CHARS = 64 * 1024;
const READY_TIMEOUT_MS = 60_000;
const STOP_GRACE_MS = 8_000;
const HOST = '127.0.0.1';

/** Environment variables the server reads; a child gets only the ones the benchmark sets. */
const SERVER_VARIABLES = /^(ROLE|DATABASE_URL|REDIS_URL|REDIS_PREFIX|DATA_DIR|PORT|HOST|SERVICE_MODE|PUBLIC_BASE_URL|LOG_LEVEL|ENGINE_.*|WORKER_.*|JOB_.*|WEBHOOK_.*|SHUTDOWN_GRACE_MS|READ_CACHE_MB)$/;

export interface Memory {
  /** Resident set size now. */
  rssBytes: number;
  /** The highest resident set size of the process so far (VmHWM). */
  hwmBytes: number;
}

export interface Proc {
  name: string;
  pid: number;
  url: string;
  exited: Promise<number>;
  /** The last few KB of the child's stdout and stderr, for error messages. */
  output(): string;
  memory(): Memory | null;
  stop(): Promise<void>;
}

const live = new Set<Proc>();
let guardInstalled = false;

function installExitGuard(): void {
  if (guardInstalled) return;
  guardInstalled = true;
  // Last resort when the benchmark dies without its cleanup: no child outlives it.
  process.once('exit', () => {
    for (const proc of live) {
      try {
        process.kill(proc.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  });
}

/** Reads VmRSS and VmHWM of a Linux process; null when it is gone or /proc is missing. */
export function readMemory(pid: number): Memory | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN);
    const rss = kb('VmRSS');
    const hwm = kb('VmHWM');
    if (Number.isNaN(rss)) return null;
    return { rssBytes: rss * 1024, hwmBytes: (Number.isNaN(hwm) ? rss : hwm) * 1024 };
  } catch {
    return null;
  }
}

/** A TCP port free on the loopback right now (the child binds it a moment later). */
export async function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const probe = createServer();
    probe.once('error', fail);
    probe.listen(0, HOST, () => {
      const address = probe.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      probe.close(() => done(port));
    });
  });
}

function childEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) if (!SERVER_VARIABLES.test(name)) env[name] = value;
  return { ...env, SCARF_ANALYTICS: 'false', ...extra };
}

interface SpawnSpec {
  name: string;
  args: string[];
  env: Record<string, string>;
  port: number;
  /** A request that answers 2xx once the child serves. */
  probe: { path: string; headers?: Record<string, string> };
}

async function spawnChild(spec: SpawnSpec): Promise<Proc> {
  installExitGuard();
  const child: ChildProcess = spawn(process.execPath, spec.args, { cwd: ROOT, env: childEnv(spec.env), stdio: ['ignore', 'pipe', 'pipe'] });
  let tail = '';
  const keep = (chunk: Buffer) => {
    tail = (tail + chunk.toString('utf8')).slice(-OUTPUT_TAIL_CHARS);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<number>((done) => {
    child.once('exit', (code, signal) => done(code ?? (signal ? 128 : 0)));
    child.once('error', () => done(127));
  });
  const pid = child.pid ?? -1;
  const url = `http://${HOST}:${spec.port}`;
  let stopping: Promise<void> | undefined;
  const proc: Proc = {
    name: spec.name,
    pid,
    url,
    exited,
    output: () => tail.trim(),
    memory: () => readMemory(pid),
    stop() {
      stopping ??= (async () => {
        if (child.exitCode === null && child.signalCode === null) {
          child.kill('SIGTERM');
          const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
          await exited;
          clearTimeout(timer);
        }
        live.delete(proc);
      })();
      return stopping;
    },
  };
  live.add(proc);
  try {
    await waitUntilServing(url, spec.probe, exited);
  } catch (error) {
    await proc.stop();
    throw new Error(`${spec.name}: ${(error as Error).message}\n${tail.trim()}`);
  }
  return proc;
}

async function waitUntilServing(url: string, probe: SpawnSpec['probe'], exited: Promise<number>): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  let died: number | undefined;
  void exited.then((code) => {
    died = code;
  });
  let last = '';
  while (Date.now() < deadline) {
    if (died !== undefined) throw new Error(`exited with code ${died} before serving`);
    try {
      const res = await fetch(url + probe.path, { headers: probe.headers, signal: AbortSignal.timeout(2000) });
      await res.arrayBuffer();
      if (res.ok) return;
      last = `status ${res.status}`;
    } catch (error) {
      last = (error as Error).message;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`not serving ${url}${probe.path} within ${READY_TIMEOUT_MS} ms (${last})`);
}

/** `node server/src/main.ts` with `npm start`'s flags (a later flag of `nodeArgs` wins) and the given environment (store, engine, webhooks). */
export async function startServer(name: string, env: Record<string, string>, nodeArgs: string[] = []): Promise<Proc> {
  const port = await freePort();
  return spawnChild({
    name,
    args: [...SERVER_NODE_FLAGS, ...nodeArgs, SERVER_MAIN],
    port,
    env: { HOST, PORT: String(port), LOG_LEVEL: 'warn', SHUTDOWN_GRACE_MS: '2000', ...env },
    probe: { path: '/healthz' },
  });
}

/** The ceiling: bare Koa + @koa/router answering with the bytes in `bodyFile` (and, with `sqliteFile`, inserting each POSTed body there). */
export async function startBareKoa(bodyFile: string, sqliteFile?: string): Promise<Proc> {
  const port = await freePort();
  return spawnChild({
    name: sqliteFile ? 'bare-koa-sqlite' : 'bare-koa',
    args: [BARE_KOA, '--port', String(port), '--body', bodyFile, ...(sqliteFile ? ['--sqlite', sqliteFile] : [])],
    port,
    env: {},
    probe: { path: '/v1/avatars/probe' },
  });
}

/** A round-robin TCP balancer in front of `targets` (balancer.ts), ready once it reaches one of them. */
export async function startBalancer(name: string, targets: Proc[]): Promise<Proc> {
  const port = await freePort();
  return spawnChild({
    name,
    args: [BALANCER, '--port', String(port), '--targets', targets.map((t) => new URL(t.url).host).join(',')],
    port,
    env: {},
    probe: { path: '/healthz' },
  });
}

/**
 * Prism's mock of the bundled contract, with its request log silenced (`-v silent`):
 * scripts/mock.ts's startMock takes no logging option and reads readiness from the log,
 * so the benchmark starts the same entry point itself and probes over HTTP instead.
 */
export async function startPrism(): Promise<Proc> {
  const port = await freePort();
  return spawnChild({
    name: 'prism',
    args: [PRISM, 'mock', BUNDLE, '--host', HOST, '--port', String(port), '-v', 'silent'],
    port,
    env: {},
    probe: { path: '/v1/avatars/av_probe', headers: { Authorization: 'Bearer sk_test_bench' } },
  });
}

/** Stops every child still running, each by its own pid. */
export async function stopAll(): Promise<void> {
  await Promise.all([...live].map((proc) => proc.stop().catch(() => undefined)));
}

/** Samples a process's memory every `intervalMs` while a load runs; returns the peak seen. */
export function sampleMemory(pid: number, intervalMs = 100): { stop(): { peakRssBytes: number; hwmBytes: number } | null } {
  let peak = 0;
  let hwm = 0;
  const take = () => {
    const m = readMemory(pid);
    if (m) {
      peak = Math.max(peak, m.rssBytes);
      hwm = Math.max(hwm, m.hwmBytes);
    }
  };
  take();
  const timer = setInterval(take, intervalMs);
  return {
    stop() {
      clearInterval(timer);
      take();
      return peak > 0 ? { peakRssBytes: peak, hwmBytes: hwm } : null;
    },
  };
}
