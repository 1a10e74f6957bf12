// One bounded HTTP load with autocannon's programmatic API: a fixed concurrency, a
// duration or an amount, and always a wall-clock limit. Latencies are taken from
// autocannon's per-response event (sub-millisecond; its own histogram keeps whole ms).
import autocannon, { type RawRequest, type RequestSpec } from 'autocannon';
import { Samples, summarize, type LatencySummary } from './stats.ts';

export interface LoadSpec {
  url: string;
  path: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  connections: number;
  /** Run for this long... */
  durationSeconds?: number;
  /** ...or until this many requests were answered (takes precedence). */
  amount?: number;
  /** Hard wall-clock limit: the load stops here whatever else was asked. */
  maxSeconds: number;
  /** The status a request should get; default any 2xx. Others count as unexpected. */
  expectedStatus?: number;
  /** Adjusts each request (e.g. picks its key or its avatar). */
  setup?: (request: RawRequest) => RawRequest;
}

export interface LoadResult {
  durationSeconds: number;
  /** Responses received, any status. */
  responses: number;
  /** Responses with the expected status. */
  ok: number;
  /** Socket errors and timeouts. */
  errors: number;
  /** Requests that timed out (also counted in errors). */
  timeouts: number;
  /** Responses with the expected status per second. */
  rps: number;
  /** Latency of the responses with the expected status, in ms. */
  latency: LatencySummary;
  statusCodes: Record<string, number>;
  /** True when the wall-clock limit, not the duration or amount, ended the load. */
  cutShort: boolean;
}

const REQUEST_TIMEOUT_SECONDS = 10;

export async function runLoad(spec: LoadSpec): Promise<LoadResult> {
  const request: RequestSpec = { method: spec.method ?? 'GET', path: spec.path, headers: spec.headers ?? {}, ...(spec.body === undefined ? {} : { body: spec.body }) };
  if (spec.setup) {
    const setup = spec.setup;
    request.setupRequest = (req) => setup({ ...req, headers: { ...req.headers } });
  }
  const instance = autocannon({
    url: spec.url,
    connections: spec.connections,
    ...(spec.amount === undefined ? { duration: spec.durationSeconds ?? 1 } : { amount: spec.amount }),
    timeout: REQUEST_TIMEOUT_SECONDS,
    requests: [request],
  });
  const latencies = new Samples();
  const expected = spec.expectedStatus;
  const statusCodes: Record<string, number> = {};
  let responses = 0;
  let lastResponseAt = 0;
  instance.on('response', (_client: unknown, status: number, _bytes: number, ms: number) => {
    responses++;
    lastResponseAt = performance.now();
    statusCodes[status] = (statusCodes[status] ?? 0) + 1;
    if (expected === undefined ? status >= 200 && status < 300 : status === expected) latencies.push(ms);
  });
  let cutShort = false;
  const started = performance.now();
  const limit = setTimeout(() => {
    cutShort = true;
    instance.stop();
  }, spec.maxSeconds * 1000);
  try {
    const result = await instance;
    const ok = latencies.length;
    // A run by amount ends on autocannon's next 1 s sample tick: time it to its last response instead.
    const duration = Math.max(spec.amount === undefined ? result.duration : ((lastResponseAt || performance.now()) - started) / 1000, 1e-3);
    return {
      durationSeconds: duration,
      responses,
      ok,
      errors: result.errors,
      timeouts: result.timeouts,
      rps: ok / duration,
      latency: summarize(latencies.values()),
      statusCodes,
      cutShort,
    };
  } finally {
    clearTimeout(limit);
  }
}

/**
 * Sends `count` identical POSTs evenly spaced at `rate` a second, each as soon as it is
 * due, whatever the answers to the earlier ones (an open loop). autocannon's
 * overallRate sends a second's requests in one burst, which measures a queue, not a lag.
 */
export async function pacedPosts(spec: { url: string; headers: Record<string, string>; body: string; rate: number; count: number; maxSeconds: number }): Promise<{ statuses: Record<string, number>; errors: number }> {
  const statuses: Record<string, number> = {};
  let errors = 0;
  const pending: Promise<void>[] = [];
  const started = performance.now();
  const deadline = started + spec.maxSeconds * 1000;
  for (let i = 0; i < spec.count && performance.now() < deadline; i++) {
    const due = started + (i * 1000) / spec.rate;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    pending.push(
      fetch(spec.url, { method: 'POST', headers: spec.headers, body: spec.body, signal: AbortSignal.timeout(10_000) }).then(
        async (res) => {
          await res.arrayBuffer();
          statuses[res.status] = (statuses[res.status] ?? 0) + 1;
        },
        () => {
          errors++;
        },
      ),
    );
  }
  await Promise.all(pending);
  return { statuses, errors };
}

/** Round-robin over a list (keys, avatar IDs) for `setup`. */
export function cycle<T>(items: readonly T[]): () => T {
  if (items.length === 0) throw new Error('cycle() needs at least one item');
  let i = 0;
  return () => items[i++ % items.length]!;
}
