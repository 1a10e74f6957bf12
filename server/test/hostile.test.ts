// Thousands of generated bad requests over every operation of the contract, against a
// real server process on the store of the project under test. Whatever arrives, the
// server answers without a 5xx, every refusal is a problem document with its code, no
// credit is spent, and afterwards the server is alive and its heap back near idle.
//
// Seeded and reproducible: HOSTILE_SEED replays a run, HOSTILE_RUNS sizes it; a failure
// is shrunk by fast-check to its smallest request and printed with the seed.
import { Agent, request as httpRequest } from 'node:http';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.ts';
import { createAccount } from '../src/domain/accounts.ts';
import { systemClock } from '../src/domain/clock.ts';
import { openStore } from '../src/runtime.ts';
import type { Store } from '../src/domain/ports.ts';
import { GENEROUS_PLAN } from './support/harness.ts';
import { startServerProcess, type ServerProcess } from './support/serverProcess.ts';
import { createTestStoreEnv, type TestStoreEnv } from './support/stores.ts';
import bundle from '../../generated/openapi.json' with { type: 'json' };

const SEED = Number(process.env.HOSTILE_SEED ?? 20_261_125);
const RUNS = Number(process.env.HOSTILE_RUNS ?? 2000);

type Schema = Record<string, any>;
const document = bundle as unknown as { paths: Record<string, Record<string, { requestBody?: unknown }>>; components: Schema };

/** Every operation of the contract, so that a new one is covered without a word here. */
const OPERATIONS = Object.entries(document.paths).flatMap(([path, item]) =>
  Object.entries(item)
    .filter(([method]) => ['get', 'post', 'put', 'patch', 'delete'].includes(method))
    .map(([method, op]) => ({ method: method.toUpperCase(), path, hasBody: Boolean(op.requestBody) })),
);

/** Member names and enum values anywhere in the request bodies: the words a hostile body plays with. */
function vocabulary(): { names: string[]; words: string[] } {
  const names = new Set<string>();
  const words = new Set<string>();
  const seen = new Set<unknown>();
  const walk = (node: unknown): void => {
    if (!node || typeof node !== 'object' || seen.has(node)) return;
    seen.add(node);
    const n = node as Schema;
    if (typeof n.$ref === 'string') walk(n.$ref.slice(2).split('/').reduce((o: Schema, k: string) => o?.[k], document as Schema));
    for (const name of Object.keys(n.properties ?? {})) names.add(name);
    for (const value of n.enum ?? []) if (typeof value === 'string') words.add(value);
    if (typeof n.const === 'string') words.add(n.const);
    for (const child of Object.values(n)) walk(child);
  };
  for (const item of Object.values(document.paths)) for (const op of Object.values(item)) walk(op.requestBody);
  return { names: [...names], words: [...words] };
}

const { names, words } = vocabulary();
const printable = (maxLength: number) => fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength });

/** Values that have broken parsers and validators before. */
const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(...words),
  fc.jsonValue({ maxDepth: 3 }),
  fc.string({ unit: 'binary', maxLength: 64 }),
  fc.constantFrom(null, true, -0, 1e308, -1e308, 2 ** 53 + 1, '', ' ', '\u0000', '\ud800', '💥'.repeat(300), 'x'.repeat(70_000), '__proto__', '../../etc/passwd', 'data:image/png;base64,AAAA', 'https://127.0.0.1/', 'http://[::1]/', 'https://example.com/' + 'a'.repeat(3000)),
  fc.integer({ min: 1, max: 3000 }).map((depth) => JSON.parse('['.repeat(depth) + ']'.repeat(depth))),
);

const hostileObject = fc.dictionary(fc.oneof(fc.constantFrom(...names, '__proto__', 'constructor', 'prototype'), printable(20)), hostileValue, { maxKeys: 12 });

/** The raw text of a body: JSON of hostile shapes, broken JSON, or nesting too deep for a recursive parser. */
const body = fc.oneof(
  { weight: 5, arbitrary: hostileObject.map((o) => JSON.stringify(o)) },
  { weight: 2, arbitrary: fc.jsonValue().map((v) => JSON.stringify(v)) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 2000 }) },
  { weight: 1, arbitrary: fc.integer({ min: 1000, max: 200_000 }).map((depth) => '['.repeat(depth) + ']'.repeat(depth)) },
  { weight: 1, arbitrary: fc.integer({ min: 60_000, max: 200_000 }).map((size) => JSON.stringify({ name: 'x'.repeat(size) })) },
  { weight: 1, arbitrary: fc.constant(undefined) },
);

const contentType = fc.constantFrom(
  undefined,
  'application/json',
  'application/json; charset=utf-8',
  'application/json; charset=utf-16',
  'application/merge-patch+json',
  'text/plain',
  'multipart/form-data; boundary=xyz',
  'application/x-www-form-urlencoded',
  ';;;',
);

interface Generated {
  method: string;
  path: string;
  headers: Record<string, string | string[]>;
  body: string | undefined;
}

/** A request as a failure prints it: huge paths and bodies cut, with their length. */
function described(r: Generated): Generated {
  const cut = (s: string) => (s.length > 300 ? `${s.slice(0, 300)}… (${s.length} characters)` : s);
  return Object.assign(r, { [fc.toStringMethod]: () => `${r.method} ${cut(r.path)} ${JSON.stringify(r.headers, (_k, v) => (typeof v === 'string' ? cut(v) : v))} body: ${r.body === undefined ? 'none' : JSON.stringify(cut(r.body))}` });
}

function requestArbitrary(key: string): fc.Arbitrary<Generated> {
  const id = fc.oneof(fc.constantFrom('av_3k9x2m7q4w8e1r5t6y0u2i4o', 'vid_8f2k4m6n1p3q5r7s9t0v2w4x', '', '..', '%00', '%2e%2e%2f', 'a'.repeat(5000)), printable(40).map(encodeURIComponent));
  const auth = fc.constantFrom<string | string[] | undefined>(
    `Bearer ${key}`,
    `bearer ${key}`,
    `Bearer ${key}x`,
    'Bearer sk_test_unknownunknownunknown',
    `Basic ${Buffer.from('a:b').toString('base64')}`,
    'Bearer',
    `Bearer ${'k'.repeat(8000)}`,
    [`Bearer ${key}`, `Bearer ${key}`],
    undefined,
  );
  const extra = fc.record(
    {
      'X-Request-Id': printable(300),
      'Content-Encoding': fc.constantFrom('gzip', 'br', 'identity', 'x'),
      Accept: fc.constantFrom('*/*', 'text/html', 'application/problem+json', ''),
      'Idempotency-Key': printable(300),
      Expect: fc.constantFrom('100-continue'),
    },
    { requiredKeys: [] },
  );
  return fc
    .record({
      operation: fc.constantFrom(...OPERATIONS),
      method: fc.option(fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS', 'TRACE', 'PROPFIND'), { freq: 4 }),
      id,
      query: fc.option(fc.dictionary(printable(10), printable(50), { maxKeys: 4 }), { freq: 3 }),
      auth,
      contentType,
      body,
      extra,
    })
    .map(({ operation, method, id: pathId, query, auth: authorization, contentType: type, body: text, extra: more }) => {
      const path = operation.path.replace('{id}', pathId) + (query ? `?${new URLSearchParams(query)}` : '');
      const headers: Record<string, string | string[]> = { ...more };
      if (authorization) headers.Authorization = authorization;
      if (type) headers['Content-Type'] = type;
      return described({ method: method ?? operation.method, path, headers, body: text });
    });
}

interface Answer {
  status: number;
  type: string;
  text: string;
}

// A connection per request: a server that answers before reading a body closes the
// connection, and a kept-alive client could race that close and report a reset that is
// not the server's fault.
const agent = new Agent({ keepAlive: false });

function send(base: string, r: Generated): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(base + r.path, { method: r.method, headers: r.headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type'] ?? ''), text: Buffer.concat(chunks).toString() }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(r.body);
  });
}

/** What is wrong with one answer, or null. */
function verdict(r: Generated, a: Answer): string | null {
  if (a.status >= 500) return `answered ${a.status}: ${a.text.slice(0, 300)}`;
  if (a.status < 400 || r.method === 'HEAD') return null;
  if (!a.type.startsWith('application/problem+json')) return `answered ${a.status} as ${a.type || 'no content type'}`;
  let problem: { code?: unknown; status?: unknown };
  try {
    problem = JSON.parse(a.text);
  } catch {
    return `answered ${a.status} with a body that is not JSON`;
  }
  if (typeof problem.code !== 'string' || problem.status !== a.status) return `answered ${a.status} with a problem lacking its code or status: ${a.text.slice(0, 300)}`;
  return null;
}

async function heapUsed(server: ServerProcess): Promise<number> {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  return Number(/^nodejs_heap_size_used_bytes (\S+)$/m.exec(text)![1]);
}

let storeEnv: TestStoreEnv;
let store: Store;
let server: ServerProcess;
let key: string;
let accountId: string;
beforeAll(async () => {
  storeEnv = await createTestStoreEnv();
  server = await startServerProcess({ ...storeEnv.env, LOG_LEVEL: 'warn', ENGINE_AVATAR_MS: '0', ENGINE_VIDEO_MS: '0' });
  store = await openStore(loadConfig(storeEnv.env), { serving: false });
  // A key whose account has no credits: a valid create answers 402 and costs nothing.
  const account = await createAccount(store, systemClock, { name: 'Hostile', monthlyCredits: 0, plan: GENEROUS_PLAN });
  key = account.api_key;
  accountId = account.account_id;
}, 60_000);
afterAll(async () => {
  agent.destroy();
  await server?.stop();
  await store?.close();
  await storeEnv?.drop();
});

describe(`${RUNS} generated hostile requests (seed ${SEED})`, () => {
  it('get no 5xx, a problem with its code for every refusal, spend nothing, and leave the server alive with its heap near idle', async () => {
    for (let i = 0; i < 200; i++) await send(server.url, { method: 'GET', path: '/v1/me', headers: { Authorization: `Bearer ${key}` }, body: undefined });
    const idleHeap = await heapUsed(server);

    const statuses = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(requestArbitrary(key), async (r) => {
        const answer = await send(server.url, r);
        statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
        const problem = verdict(r, answer);
        if (problem) throw new Error(problem);
      }),
      { seed: SEED, numRuns: RUNS, endOnFailure: false },
    );

    // The generation reached past the front door: every kind of refusal was met.
    expect([...statuses.keys()].sort(), JSON.stringify(Object.fromEntries(statuses))).toEqual(expect.arrayContaining([400, 401, 404, 405, 413, 415, 422]));
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    expect(await store.jobs.countActiveJobs()).toEqual({ queued: 0, processing: 0 });
    const month = await store.jobs.creditBalance(accountId, new Date().toISOString().slice(0, 7));
    expect(month).toMatchObject({ reserved: 0, used: 0 });
    // Garbage is collected when V8 decides; the heap must come back down, not stay grown.
    let heap = await heapUsed(server);
    for (let i = 0; i < 100 && heap > idleHeap + 16 * 1024 * 1024; i++) {
      await new Promise((r) => setTimeout(r, 100));
      heap = await heapUsed(server);
    }
    expect(heap, `heap ${Math.round(heap / 2 ** 20)} MB after, ${Math.round(idleHeap / 2 ** 20)} MB idle`).toBeLessThanOrEqual(idleHeap + 16 * 1024 * 1024);
  }, 180_000);
});
