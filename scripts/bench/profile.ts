// Where a server's CPU time goes: a V8 .cpuprofile (node --cpu-prof) reduced to a few
// named shares. Each sample is given to the innermost frame of its stack that a rule
// recognises, so native work (SQLite, SHA-256, JSON) counts for the code that asked
// for it. Used to say *why* a read figure misses its target, not to measure speed.

export interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string }; children?: number[] }[];
  /** Microseconds on the monotonic clock (the one process.hrtime reads, in every process). */
  startTime?: number;
  samples: number[];
  timeDeltas?: number[];
}

/** Microseconds on the monotonic clock, comparable with a profile's sample times. */
export const monotonicMicros = (): number => Number(process.hrtime.bigint() / 1000n);

export interface Category {
  name: string;
  /** Tested against the frame's URL (file:///..., node:..., or '' for native code). */
  url?: RegExp;
  /**
   * Tested against the function name of every frame on the stack, not just the
   * innermost: the whole call belongs to this category (the runner's claimJob calls
   * closures in the jobs adapter that would otherwise count as job reads).
   */
  fn?: RegExp;
  /**
   * Node core work (sockets, streams) called from this category's code is counted here
   * instead of as Node core: a database client's socket writes belong to the client.
   */
  nodeBelow?: boolean;
}

export interface Attribution {
  /** Samples not idle: the shares below are of these. */
  busySamples: number;
  /** Share of all samples spent idle (waiting for I/O). */
  idleShare: number;
  shares: { name: string; share: number }[];
}

const SERVER = String.raw`/server/src/`;
const MODULES = String.raw`/node_modules/`;

/** The server's layers, most specific first. */
export const SERVER_CATEGORIES: readonly Category[] = [
  // The dispatcher's store calls first: a whole call counts for it, whichever module its closures live in.
  { name: 'webhook dispatcher (claim, sign, record)', url: new RegExp(`${SERVER}(workers/webhookDispatcher|storage/(embedded|postgres-redis)/outbox)\\.ts|/contract/webhookSignature\\.ts`), fn: /^(claimDueEvents|markDelivered|scheduleRetry|markFailed|nextDueAfter|countPending)$/ },
  { name: 'rate limiter (count per request)', url: new RegExp(`${SERVER}(storage/(embedded|postgres-redis/redis)/rateLimits|http/admit|domain/(admission|rateLimits))\\.ts`) },
  { name: 'auth (key hash + key lookup)', url: new RegExp(`${SERVER}(domain/keys|storage/(embedded|postgres-redis)/accounts)\\.ts`) },
  { name: 'job runner (claim, finish)', url: new RegExp(`${SERVER}(workers/jobRunner|domain/completion|domain/events|engine/\\w+)\\.ts`), fn: /^(claimJobs?|completeJob|renewLease|releaseLease|countActiveJobs)$/ },
  { name: 'webhook HTTP client', url: new RegExp(`${SERVER}workers/deliver\\.ts`), nodeBelow: true },
  { name: 'jobs: create / read + serialize', url: new RegExp(`${SERVER}(domain/(jobs|serialize|credits|ids)|storage/(embedded|postgres-redis)/jobs|storage/rows|http/routes)\\.ts`) },
  { name: 'request validation (Ajv)', url: new RegExp(`${SERVER}http/(body|contract)\\.ts|${MODULES}(ajv|ajv-formats|fast-uri)/`) },
  { name: 'metrics (prom-client)', url: new RegExp(`${MODULES}prom-client/|${SERVER}metrics\\.ts`) },
  { name: 'logging (pino)', url: new RegExp(`${MODULES}(pino|sonic-boom|thread-stream)/|${SERVER}logger\\.ts`) },
  { name: 'server middleware (request id, errors)', url: new RegExp(`${SERVER}(app|http/\\w+)\\.ts`) },
  { name: 'PostgreSQL / Redis clients (with their socket I/O)', url: new RegExp(`${MODULES}(pg|pg-protocol|pg-pool|pg-types|ioredis|@ioredis|redis-parser|redis-errors)/`), nodeBelow: true },
  { name: 'Koa + router', url: new RegExp(`${MODULES}(koa|koa-compose|@koa/router|path-to-regexp|koa-convert)/`) },
  { name: 'other packages', url: new RegExp(MODULES) },
];

const NODE_CORE = 'Node core: HTTP, sockets, streams, timers';
const GC = 'garbage collection';
const IDLE = '(idle)';
const UNATTRIBUTED = 'V8 / native, unattributed';

function matches(category: Category, frame: { functionName: string; url: string }): boolean {
  return (category.url?.test(frame.url) ?? false) || (category.fn?.test(frame.functionName) ?? false);
}

const isCore = (url: string) => url.startsWith('node:');

/**
 * Shares of busy time per category. `window` keeps only the samples taken within it
 * (e.g. the load, leaving out the process's start-up and shutdown).
 *
 * A sample goes to the innermost frame of its stack that a category recognises; native
 * frames (SQLite, crypto, JSON) inherit from their caller; Node core frames count as
 * Node core unless the code that called them asks for them (`nodeBelow`).
 */
export function attribute(profile: CpuProfile, categories: readonly Category[] = SERVER_CATEGORIES, window?: { fromUs: number; toUs: number }): Attribution {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const memo = new Map<number, string>();

  /** The category of the nearest recognised application or package frame at or above `id`. */
  const codeCategory = (id: number | undefined): Category | undefined => {
    for (let at = id; at !== undefined; at = parent.get(at)) {
      const frame = byId.get(at)?.callFrame;
      if (!frame || frame.url === '' || isCore(frame.url)) continue;
      const hit = categories.find((c) => matches(c, frame));
      if (hit) return hit;
    }
    return undefined;
  };

  const byFunction = categories.filter((c) => c.fn);
  /** The category of the innermost frame at or above `id` whose function name a category claims. */
  const callCategory = (id: number): Category | undefined => {
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const name = byId.get(at)?.callFrame.functionName ?? '';
      const hit = byFunction.find((c) => c.fn!.test(name));
      if (hit) return hit;
    }
    return undefined;
  };

  const categoryOf = (id: number): string => {
    const known = memo.get(id);
    if (known !== undefined) return known;
    const frame = byId.get(id)?.callFrame;
    const call = frame && frame.functionName !== IDLE ? callCategory(id) : undefined;
    let name: string;
    if (!frame) name = UNATTRIBUTED;
    else if (call) name = call.name;
    else if (frame.functionName === IDLE) name = IDLE;
    else if (frame.functionName === '(garbage collector)') name = GC;
    else if (frame.url === '') {
      const up = parent.get(id);
      name = up === undefined || frame.functionName === '(program)' || frame.functionName === '(root)' ? UNATTRIBUTED : categoryOf(up);
    } else if (isCore(frame.url)) {
      name = codeCategory(id)?.nodeBelow ? codeCategory(id)!.name : NODE_CORE;
    } else {
      const hit = categories.find((c) => matches(c, frame));
      const up = parent.get(id);
      name = hit ? hit.name : up === undefined ? UNATTRIBUTED : categoryOf(up);
    }
    memo.set(id, name);
    return name;
  };

  // timeDeltas[i + 1] is the time until the sample after i: the time sample i stands for.
  const weights = profile.timeDeltas;
  const totals = new Map<string, number>();
  let all = 0;
  let busySamples = 0;
  let at = profile.startTime ?? 0;
  profile.samples.forEach((id, i) => {
    at += weights?.[i] ?? 0;
    if (window && (at < window.fromUs || at > window.toUs)) return;
    const weight = weights && weights[i + 1] !== undefined ? Math.max(0, weights[i + 1]!) : 1;
    const name = categoryOf(id);
    totals.set(name, (totals.get(name) ?? 0) + weight);
    all += weight;
    if (name !== IDLE) busySamples++;
  });
  const idle = totals.get(IDLE) ?? 0;
  totals.delete(IDLE);
  const busy = all - idle;
  const shares = [...totals.entries()]
    .map(([name, t]) => ({ name, share: busy > 0 ? t / busy : 0 }))
    .sort((a, b) => b.share - a.share);
  return { busySamples, idleShare: all > 0 ? idle / all : 0, shares };
}
