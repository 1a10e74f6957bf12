// What every part of the benchmark shares: the run's context (options, log, cleanup),
// interleaved load rounds, and bounded waiting.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RawRequest } from 'autocannon';
import { watchCpu, type CpuCores } from './cpu.ts';
import { runLoad, type LoadResult } from './load.ts';
import type { RoundFigure } from './model.ts';
import type { Options } from './options.ts';
import { attribute, monotonicMicros, type Attribution, type CpuProfile } from './profile.ts';
import { sampleMemory, startServer, stopAll, type Proc } from './procs.ts';
import { median } from './stats.ts';
import { createBenchStore, type BenchStore, type StoreKind } from './stores.ts';

/** Pause between two loads, so the sockets of one are closed before the next starts. */
const SETTLE_MS = 300;

export class Context {
  readonly options: Options;
  readonly tmp: string;
  private readonly stores = new Set<BenchStore>();
  private readonly started = performance.now();

  constructor(options: Options) {
    this.options = options;
    this.tmp = mkdtempSync(join(tmpdir(), 'avatar-bench-run-'));
  }

  get sizes() {
    return this.options.sizes;
  }

  log(message: string): void {
    const seconds = ((performance.now() - this.started) / 1000).toFixed(0).padStart(4);
    process.stderr.write(`[bench ${seconds}s] ${message}\n`);
  }

  /** A new isolated store, dropped by cleanup() if the part does not drop it first. */
  async store(kind: StoreKind): Promise<BenchStore> {
    const store = await createBenchStore(kind);
    this.stores.add(store);
    return store;
  }

  async drop(store: BenchStore): Promise<void> {
    this.stores.delete(store);
    await store.drop();
  }

  /** Stops every child and drops every store and temp folder still around. Safe to call twice. */
  async cleanup(): Promise<void> {
    await stopAll();
    for (const store of [...this.stores]) {
      this.stores.delete(store);
      await store.drop().catch((error: unknown) => this.log(`could not drop a ${store.kind} store: ${(error as Error).message}`));
    }
    rmSync(this.tmp, { recursive: true, force: true });
  }
}

/** Environment of every server the benchmark starts; parts add their store and engine. */
export const SERVER_BASE_ENV: Record<string, string> = {
  LOG_LEVEL: 'warn',
  ENGINE_AVATAR_MS: '0',
  ENGINE_VIDEO_MS: '0',
  SERVICE_MODE: 'sandbox',
};

export async function startBenchServer(name: string, store: BenchStore, env: Record<string, string> = {}, nodeArgs: string[] = []): Promise<Proc> {
  return startServer(name, { ...SERVER_BASE_ENV, ...store.env, ...env }, nodeArgs);
}

/**
 * Starts a server on `store` under `node --cpu-prof`, runs `work` against it, stops it,
 * and attributes the samples taken during `work` only (start-up and shutdown left out).
 * For explaining figures, never for timing them: the profiler slows the server down.
 */
export async function withProfile(ctx: Context, name: string, store: BenchStore, env: Record<string, string>, work: (proc: Proc) => Promise<void>): Promise<Attribution> {
  const dir = mkdtempSync(join(ctx.tmp, `profile-${name}-`));
  const proc = await startBenchServer(`profiled-${name}`, store, env, ['--cpu-prof', '--cpu-prof-dir', dir]);
  let window: { fromUs: number; toUs: number };
  try {
    const fromUs = monotonicMicros();
    await work(proc);
    window = { fromUs, toUs: monotonicMicros() };
  } finally {
    await proc.stop();
  }
  const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
  if (!file) throw new Error(`node --cpu-prof wrote no profile in ${dir}`);
  return attribute(JSON.parse(readFileSync(join(dir, file), 'utf8')) as CpuProfile, undefined, window);
}

/** One load target of an interleaved comparison. */
export interface RoundTarget {
  id: string;
  proc: Proc;
  path: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  expectedStatus: number;
  setup?: (request: RawRequest) => RawRequest;
  connections?: number;
}

export interface RoundsOutcome {
  rounds: RoundFigure[];
  loads: LoadResult[];
  rps: number;
  p50Ms: number;
  p99Ms: number;
  unexpected: number;
  /** Median over the rounds of the cores each party used. */
  cpu?: CpuCores;
  peakRssBytes?: number;
  hwmBytes?: number;
}

/** The median of each field over the rounds. */
export function medianCpu(samples: readonly CpuCores[]): CpuCores | undefined {
  if (samples.length === 0) return undefined;
  const field = (k: keyof CpuCores) => median(samples.map((c) => c[k]));
  return { target: field('target'), loadGenerator: field('loadGenerator'), databases: field('databases'), other: field('other'), machine: field('machine') };
}

/**
 * Runs every target for `rounds` rounds, interleaved (round 1 of each, then round 2...)
 * and in a rotated order each round, so that a slow patch of a shared machine falls on
 * all of them alike. A short warm-up of each comes first and is not counted. `settle`,
 * when given, is awaited after each load: what a load left the targets to do (the jobs a
 * write load queued) is done before the next load starts, rather than beside it.
 */
export async function interleavedRounds(
  ctx: Context,
  targets: readonly RoundTarget[],
  options: { rounds: number; seconds: number; warmupSeconds: number; connections: number; what: string; settle?: () => Promise<void> },
): Promise<Map<string, RoundsOutcome>> {
  const loads = new Map<string, { result: LoadResult; cpu: CpuCores }[]>(targets.map((t) => [t.id, []]));
  const memory = new Map<string, { peakRssBytes: number; hwmBytes: number }>();
  const run = async (target: RoundTarget, seconds: number) => {
    const sampler = sampleMemory(target.proc.pid);
    const cpu = watchCpu(target.proc.pid);
    const result = await runLoad({
      url: target.proc.url,
      path: target.path,
      method: target.method ?? 'GET',
      headers: target.headers,
      body: target.body,
      connections: target.connections ?? options.connections,
      durationSeconds: seconds,
      maxSeconds: seconds * 3 + 10,
      expectedStatus: target.expectedStatus,
      setup: target.setup,
    });
    const { seconds: _wall, ...cores } = cpu.stop();
    const seen = sampler.stop();
    if (seen) {
      const before = memory.get(target.id);
      memory.set(target.id, { peakRssBytes: Math.max(before?.peakRssBytes ?? 0, seen.peakRssBytes), hwmBytes: Math.max(before?.hwmBytes ?? 0, seen.hwmBytes) });
    }
    await options.settle?.();
    await sleep(SETTLE_MS);
    return { result, cpu: cores };
  };
  if (options.warmupSeconds > 0) {
    for (const target of targets) await run(target, options.warmupSeconds);
  }
  for (let round = 0; round < options.rounds; round++) {
    const order = targets.map((_, i) => targets[(i + round) % targets.length]!);
    for (const target of order) {
      const measured = await run(target, options.seconds);
      loads.get(target.id)!.push(measured);
      const { result } = measured;
      ctx.log(`${options.what} round ${round + 1}/${options.rounds} ${target.id}: ${Math.round(result.rps)}/s p99 ${result.latency.p99.toFixed(2)} ms${result.responses - result.ok + result.errors > 0 ? ` (${result.responses - result.ok + result.errors} unexpected)` : ''}`);
    }
  }
  const outcome = new Map<string, RoundsOutcome>();
  for (const target of targets) {
    const measured = loads.get(target.id)!;
    const rounds: RoundFigure[] = measured.map(({ result: r, cpu }) => ({ rps: r.rps, p50Ms: r.latency.p50, p99Ms: r.latency.p99, unexpected: r.responses - r.ok + r.errors, cpu }));
    outcome.set(target.id, {
      rounds,
      loads: measured.map((m) => m.result),
      cpu: medianCpu(measured.map((m) => m.cpu)),
      rps: median(rounds.map((r) => r.rps)),
      p50Ms: median(rounds.map((r) => r.p50Ms)),
      p99Ms: median(rounds.map((r) => r.p99Ms)),
      unexpected: rounds.reduce((sum, r) => sum + r.unexpected, 0),
      ...memory.get(target.id),
    });
  }
  return outcome;
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Polls `check` until it returns a value, or throws after `timeoutMs`. */
export async function waitFor<T>(what: string, check: () => Promise<T | undefined>, timeoutMs: number, intervalMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not done within ${Math.round(timeoutMs / 1000)} s`);
    await sleep(intervalMs);
  }
}

export async function getJson(url: string, headers: Record<string, string> = {}): Promise<{ status: number; body: any; text: string }> {
  const res = await fetch(url, { headers, signal: AbortSignal.timeout(10_000) });
  const text = await res.text();
  let body: unknown = null;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON
  }
  return { status: res.status, body, text };
}

export async function postJson(url: string, key: string, payload: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
    body: JSON.stringify(payload),
    signal: AbortSignal.timeout(10_000),
  });
  return { status: res.status, body: await res.json().catch(() => null) };
}

export const bearer = (key: string) => ({ Authorization: `Bearer ${key}` });
