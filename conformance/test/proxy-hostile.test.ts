// The proxy under hostile input, in front of this project's server: whatever a client
// sends through it gets what the service answers directly (status and problem code), the
// proxy never answers a 5xx of its own nor stops, a client's webhook_url that the service
// refuses is refused with the service's own 422 and never delivered to, two Host headers
// get the service's 400, and its memory stays bounded under bodies far past the
// service's limit.
//
// Seeded and reproducible: PROXY_HOSTILE_SEED replays a run, PROXY_HOSTILE_RUNS sizes it;
// fast-check prints the seed and the shrunk request of a failure.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_JSON_BODY_BYTES } from '../../contract/bodyLimit.ts';
import { GENEROUS_PLAN, startTestService, type TestService } from '../../server/test/support/harness.ts';
import { ContractValidator } from '../src/contract.ts';
import { CONTRACT_PROFILE } from '../src/implementation/profile.ts';
import { Shape } from '../src/implementation/shape.ts';
import { startProxy, type RunningProxy } from '../src/proxy/server.ts';
import { startRecordingReceiver } from './fixtures/clients.ts';

const SEED = Number(process.env.PROXY_HOSTILE_SEED ?? 20_261_128);
const RUNS = Number(process.env.PROXY_HOSTILE_RUNS ?? 150);
const CLI = new URL('../src/cli.ts', import.meta.url).pathname;

interface Answer {
  status: number;
  headers: Record<string, string>;
  text: string;
}

/** Undoes chunked framing, for answers whose length was not given. */
function unchunk(raw: Buffer): Buffer {
  const parts: Buffer[] = [];
  let at = 0;
  while (at < raw.length) {
    const eol = raw.indexOf('\r\n', at);
    if (eol < 0) break;
    const size = parseInt(raw.subarray(at, eol).toString(), 16);
    if (!Number.isFinite(size) || size === 0) break;
    parts.push(raw.subarray(eol + 2, eol + 2 + size));
    at = eol + 2 + size + 2;
  }
  return Buffer.concat(parts);
}

/**
 * Sends one request as raw bytes (so that duplicate headers, bad framing and odd methods
 * go out as written) on a connection of its own, and reads the first answer on it.
 */
function sendRaw(base: string, bytes: Buffer): Promise<Answer> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    const finish = () => {
      let raw = Buffer.concat(chunks);
      // An interim 100 Continue comes before the answer.
      while (/^HTTP\/1\.1 1\d\d /.test(raw.subarray(0, 13).toString('latin1')) && raw.indexOf('\r\n\r\n') >= 0) raw = raw.subarray(raw.indexOf('\r\n\r\n') + 4);
      const end = raw.indexOf('\r\n\r\n');
      if (end < 0) return reject(new Error(`no answer: ${JSON.stringify(raw.toString().slice(0, 200))}`));
      const [statusLine, ...lines] = raw.subarray(0, end).toString('latin1').split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines) headers[line.slice(0, line.indexOf(':')).toLowerCase()] = line.slice(line.indexOf(':') + 1).trim();
      const rest = raw.subarray(end + 4);
      const body = headers['transfer-encoding'] === 'chunked' ? unchunk(rest) : rest.subarray(0, Number(headers['content-length'] ?? rest.length));
      resolve({ status: Number(statusLine!.split(' ')[1]), headers, text: body.toString('utf8') });
    };
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('end', finish);
    // A server that answers before reading the whole body may reset the rest: the answer read so far counts.
    socket.on('error', () => (chunks.length ? finish() : reject(new Error('connection failed with nothing read'))));
    socket.setTimeout(20_000, () => socket.destroy(new Error('no answer within 20 s')));
    socket.end(bytes);
  });
}

const problemCode = (answer: Answer): string | undefined => {
  if (!/json/.test(answer.headers['content-type'] ?? '')) return undefined;
  try {
    return (JSON.parse(answer.text) as { code?: string }).code;
  } catch {
    return undefined;
  }
};

interface Hostile {
  method: string;
  path: string;
  headers: [string, string][];
  body: Buffer | undefined;
  framing: 'length' | 'chunked' | 'both';
}

function bytesOf(r: Hostile, host: string): Buffer {
  const lines = [`${r.method} ${r.path} HTTP/1.1`];
  if (!r.headers.some(([name]) => name.toLowerCase() === 'host')) lines.push(`Host: ${host}`);
  for (const [name, value] of r.headers) lines.push(`${name}: ${value}`);
  lines.push('Connection: close');
  const body = r.body ?? Buffer.alloc(0);
  if (r.framing !== 'chunked') lines.push(`Content-Length: ${body.length}`);
  if (r.framing !== 'length') lines.push('Transfer-Encoding: chunked');
  const framed = r.framing === 'length' ? body : Buffer.concat([Buffer.from(body.length ? `${body.length.toString(16)}\r\n` : ''), body, Buffer.from(body.length ? '\r\n0\r\n\r\n' : '0\r\n\r\n')]);
  return Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'), framed]);
}

/** The webhook URLs the service refuses, in every mode (the sandbox's rule, and the contract's schema of the URL). */
const REFUSED_WEBHOOK_URLS = [
  'http://169.254.169.254/latest/meta-data/',
  'http://[fe80::1]/hook',
  'http://[::ffff:169.254.169.254]/hook',
  'http://metadata.google.internal/hook',
  'ftp://127.0.0.1/hook',
  'javascript:alert(1)',
  'file:///etc/passwd',
  'not a url',
  'http://user:secret@127.0.0.1/hook',
  `http://127.0.0.1/${'a'.repeat(3000)}`,
  '',
];

function hostileArbitrary(key: string): fc.Arbitrary<Hostile> {
  const printable = (maxLength: number) => fc.string({ unit: fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength });
  const id = fc.oneof(fc.constantFrom('av_3k9x2m7q4w8e1r5t6y0u2i4o', '', '..', '%00', '%2e%2e%2f', '%ff', 'a'.repeat(3000)), printable(30).map(encodeURIComponent));
  const path = fc
    .tuple(
      fc.constantFrom('/v1/avatars', '/v1/avatars/{id}', '/v1/avatar-videos', '/v1/avatar-videos/{id}', '/v1/me', '/v1/webhook-events/{id}/replay', '/v1/test_helpers/clock', '/nowhere', '//v1//me', '/v1/me/../avatars'),
      id,
      fc.option(fc.dictionary(printable(8), printable(30), { maxKeys: 3 }), { freq: 3 }),
    )
    .map(([template, value, query]) => template.replace('{id}', value) + (query ? `?${new URLSearchParams(query)}` : ''));
  const json = (value: unknown) => Buffer.from(JSON.stringify(value));
  const body = fc.oneof(
    fc.constant(undefined),
    fc.jsonValue({ maxDepth: 3 }).map(json),
    fc.record({ type: fc.constantFrom('prompt', 'photo', 'x'), name: fc.string({ maxLength: 40 }), prompt: fc.string({ maxLength: 60 }), webhook_url: fc.constantFrom(...REFUSED_WEBHOOK_URLS, 'http://127.0.0.1:9/hook') }, { requiredKeys: ['type'] }).map(json),
    fc.record({ avatar_id: fc.constantFrom('av_3k9x2m7q4w8e1r5t6y0u2i4o', ''), script: fc.string({ maxLength: 40 }), webhook_url: fc.constantFrom(...REFUSED_WEBHOOK_URLS) }).map(json),
    fc.string({ unit: 'binary', maxLength: 300 }).map((s) => Buffer.from(s)),
    fc.uint8Array({ maxLength: 300 }).map((a) => Buffer.from(a)),
    fc.constantFrom(
      Buffer.from('{"type":"prompt","name":"a","prompt":"b"'),
      Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), json({ type: 'prompt', name: 'Bom', prompt: 'A presenter' })]),
      Buffer.concat([Buffer.from('{"type":"prompt","name":"'), Buffer.from([0xff, 0xfe, 0xc3]), Buffer.from('","prompt":"x"}')]),
      json({ type: 'prompt', name: 'x'.repeat(MAX_JSON_BODY_BYTES), prompt: 'big' }),
      Buffer.from('['.repeat(50_000) + ']'.repeat(50_000)),
      json({ webhook_url: 'http://169.254.169.254/', webhook_url2: 1 }),
      Buffer.from('{"webhook_url":"http://127.0.0.1:9/","webhook_url":"http://169.254.169.254/","type":"prompt","name":"n","prompt":"p"}'),
    ),
  );
  const header = fc.oneof(
    fc.constantFrom<[string, string][]>(
      [['Authorization', `Bearer ${key}`]],
      [['Authorization', `bearer ${key}`]],
      [['Authorization', 'Bearer sk_test_unknownunknownunknown']],
      [['Authorization', `Bearer ${key}`], ['Authorization', `Bearer ${key}`]],
      [['Authorization', `Bearer ${'k'.repeat(8000)}`]],
      [['Authorization', `Bearer ${key}`], ['X-Filler', 'f'.repeat(20_000)]],
      [['Host', '127.0.0.1'], ['Host', 'elsewhere.example']],
      [['Authorization', `Bearer ${key}`], ['Expect', '100-continue']],
      [['Authorization', `Bearer ${key}`], ['Expect', 'teapot']],
      [['Authorization', `Bearer ${key}`], ['Content-Encoding', 'gzip']],
      [],
    ),
  );
  const contentType = fc.constantFrom<[string, string][]>([['Content-Type', 'application/json']], [['Content-Type', 'application/json; charset=utf-8']], [['Content-Type', 'text/plain']], [['Content-Type', ';;;']], []);
  return fc
    .record({
      method: fc.constantFrom('GET', 'POST', 'POST', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS', 'TRACE', 'PROPFIND', 'BREW', 'get'),
      path,
      auth: header,
      type: contentType,
      body,
      framing: fc.constantFrom<Hostile['framing']>('length', 'length', 'length', 'chunked', 'both'),
    })
    .map(({ method, path: p, auth, type, body: b, framing }) => {
      const r: Hostile = { method, path: p, headers: [...auth, ...type], body: b, framing };
      return Object.assign(r, {
        [fc.toStringMethod]: () => `${r.method} ${r.path.slice(0, 200)} ${JSON.stringify(r.headers.map(([n, v]) => [n, v.length > 100 ? `${v.slice(0, 100)}… (${v.length})` : v]))} ${r.framing} body: ${r.body === undefined ? 'none' : JSON.stringify(r.body.subarray(0, 200).toString('latin1'))}${(r.body?.length ?? 0) > 200 ? `… (${r.body!.length} bytes)` : ''}`,
      });
    });
}

let svc: TestService;
let proxy: RunningProxy;
let key: string;
beforeAll(async () => {
  svc = await startTestService();
  // No credits: a valid create answers 402 both ways and starts nothing, so the answers
  // directly and through the proxy can be compared one after the other.
  key = (await svc.account({ credits: 0, plan: GENEROUS_PLAN })).api_key;
  proxy = await startProxy({ upstream: svc.url, port: 0, shape: new Shape(CONTRACT_PROFILE), validator: ContractValidator.load() });
}, 60_000);
afterAll(async () => {
  await proxy?.close();
  await svc?.dispose();
});

describe(`${RUNS} generated hostile requests through the proxy (seed ${SEED})`, () => {
  it('get the status and problem code the service answers directly, no 5xx of the proxy\'s own, and leave the proxy serving', async () => {
    const host = new URL(svc.url).host;
    const statuses = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(hostileArbitrary(key), async (r) => {
        const direct = await sendRaw(svc.url, bytesOf(r, host));
        const through = await sendRaw(proxy.url, bytesOf(r, new URL(proxy.url).host));
        statuses.set(through.status, (statuses.get(through.status) ?? 0) + 1);
        if (through.status >= 500) throw new Error(`the proxy answered ${through.status}: ${through.text.slice(0, 300)}`);
        if (through.status !== direct.status || problemCode(through) !== problemCode(direct)) {
          throw new Error(`through the proxy ${through.status} ${problemCode(through) ?? ''}, directly ${direct.status} ${problemCode(direct) ?? ''}: ${through.text.slice(0, 200)}`);
        }
      }),
      { seed: SEED, numRuns: RUNS, endOnFailure: true },
    );
    // The generation reached past the front door, both the proxy's refusals and the service's.
    expect([...statuses.keys()].sort(), JSON.stringify(Object.fromEntries(statuses))).toEqual(expect.arrayContaining([400, 401, 404, 415, 422, 431]));
    expect((await sendRaw(proxy.url, bytesOf({ method: 'GET', path: '/v1/me', headers: [['Authorization', `Bearer ${key}`]], body: undefined, framing: 'length' }, 'x'))).status).toBe(200);
  }, 120_000);
});

describe('a create past the service\'s limit through the proxy', () => {
  const big = Buffer.from(JSON.stringify({ type: 'prompt', name: 'Big', prompt: 'x'.repeat(MAX_JSON_BODY_BYTES) }));
  it.each([
    ['a key and JSON', `Bearer KEY`, 'application/json', 'length', 413],
    ['a key and JSON, chunked', `Bearer KEY`, 'application/json', 'chunked', 413],
    ['no valid key', 'Bearer sk_test_unknownunknownunknown', 'application/json', 'length', 401],
    ['a key and text/plain', `Bearer KEY`, 'text/plain', 'chunked', 415],
  ] as const)('when it has %s, then it gets what the service answers directly (%s first, before the size)', async (_name, auth, type, framing, status) => {
    const request = (host: string) => bytesOf({ method: 'POST', path: '/v1/avatars', headers: [['Authorization', auth.replace('KEY', key)], ['Content-Type', type]], body: big, framing }, host);
    const direct = await sendRaw(svc.url, request(new URL(svc.url).host));
    const through = await sendRaw(proxy.url, request(new URL(proxy.url).host));
    expect(direct.status).toBe(status);
    expect([through.status, problemCode(through)]).toEqual([direct.status, problemCode(direct)]);
    const seen = proxy.traffic.exchanges.at(-1)!;
    expect(seen.requestBytes).toBe(big.length);
    expect(seen.requestJson).toBeUndefined();
  });

  it('when a create under the limit is long, then the record keeps an excerpt of it with its true length', async () => {
    const body = JSON.stringify({ type: 'prompt', name: 'n'.repeat(40_000), prompt: 'A presenter' });
    const answer = await fetch(`${proxy.url}/v1/avatars`, { method: 'POST', headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' }, body });
    expect(answer.status).toBe(422);
    const seen = proxy.traffic.exchanges.at(-1)!;
    expect(seen.requestBytes).toBe(body.length);
    expect(seen.requestJson).toEqual({ type: 'prompt', name: `${'n'.repeat(200)}… (40000 characters)`, prompt: 'A presenter' });
  });
});

describe('a client\'s webhook_url through the proxy', () => {
  it.each(REFUSED_WEBHOOK_URLS.map((url) => [url.length > 60 ? `${url.slice(0, 40)}… (${url.length} characters)` : JSON.stringify(url), url]))('when it is %s, then the client gets the service\'s own 422 and the proxy routes nothing', async (_name, url) => {
    const body = { type: 'prompt', name: 'Hook', prompt: 'A presenter', webhook_url: url };
    const direct = await svc.request('POST', '/v1/avatars', { key, json: body });
    const routes = proxy.traffic.exchanges.length;
    const through = await fetch(`${proxy.url}/v1/avatars`, { method: 'POST', headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
    const answer = (await through.json()) as { code: string; errors?: { field: string; rule: string }[] };
    expect(direct.status).toBe(422);
    expect(through.status).toBe(422);
    expect(answer.code).toBe(direct.body.code);
    expect(answer.errors).toEqual(direct.body.errors);
    expect(answer.errors?.map((e) => e.field)).toContain('webhook_url');
    // What the service saw was the client's own URL, not the proxy's.
    expect(proxy.traffic.exchanges.slice(routes).every((seen) => (seen.requestJson as { webhook_url?: string }).webhook_url === url)).toBe(true);
  });

  it('when the service runs in production and the client names a loopback receiver, then the proxy (told so) leaves the URL to the service, whose 422 the client gets', async () => {
    const production = await startTestService({ env: { SERVICE_MODE: 'production', PUBLIC_BASE_URL: 'https://avatars.example' } });
    const strict = await startProxy({ upstream: production.url, port: 0, shape: new Shape(CONTRACT_PROFILE), validator: ContractValidator.load(), serviceMode: 'production' });
    try {
      const { api_key } = await production.account({ credits: 0, plan: GENEROUS_PLAN });
      const body = JSON.stringify({ type: 'prompt', name: 'Hook', prompt: 'A presenter', webhook_url: 'https://127.0.0.1/hook' });
      const answer = await fetch(`${strict.url}/v1/avatars`, { method: 'POST', headers: { Authorization: `Bearer ${api_key}`, 'Content-Type': 'application/json' }, body });
      expect(answer.status).toBe(422);
      expect(await answer.json()).toMatchObject({ code: 'validation_failed', errors: [{ field: 'webhook_url', rule: 'public_host_required' }] });
    } finally {
      await strict.close();
      await production.dispose();
    }
  }, 30_000);

  it('when a routed receiver\'s name resolves to a metadata address at delivery, then the proxy never connects and the service is told it failed', async () => {
    const receiver = await startRecordingReceiver();
    const resolving = await startProxy({
      upstream: svc.url,
      port: 0,
      shape: new Shape(CONTRACT_PROFILE),
      validator: ContractValidator.load(),
      resolve: async () => [{ address: '169.254.169.254', family: 4 }],
    });
    try {
      const { api_key } = await svc.account({ credits: 100, plan: GENEROUS_PLAN });
      // The receiver's port under a name: the service takes it, the proxy routes it, and at delivery the name points at the metadata service.
      const created = await fetch(`${resolving.url}/v1/avatars`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${api_key}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ type: 'prompt', name: 'Rebind', prompt: 'A presenter', webhook_url: `http://receiver.example:${new URL(receiver.url).port}/hook` }),
      });
      expect(created.status).toBe(202);
      await expect.poll(() => resolving.traffic.deliveries.length, { timeout: 10_000 }).toBeGreaterThanOrEqual(1);
      await new Promise((resolve) => setImmediate(resolve));
      expect(resolving.traffic.deliveries[0]!.receiverStatus).toBeUndefined();
      expect(receiver.received).toHaveLength(0);
    } finally {
      await resolving.close();
      await receiver.close();
    }
  }, 30_000);
});

describe('what the proxy refuses at the connection, as the service does', () => {
  it('when a request carries two Host headers, then it gets the service\'s 400 malformed_request, through the proxy as directly', async () => {
    const request = (host: string) => Buffer.from(`GET /v1/me HTTP/1.1\r\nHost: ${host}\r\nHost: elsewhere.example\r\nAuthorization: Bearer ${key}\r\nConnection: close\r\n\r\n`);
    const direct = await sendRaw(svc.url, request(new URL(svc.url).host));
    const through = await sendRaw(proxy.url, request(new URL(proxy.url).host));
    expect(direct.status).toBe(400);
    expect(through.status).toBe(400);
    expect(problemCode(through)).toBe(problemCode(direct));
    expect(problemCode(through)).toBe('malformed_request');
    expect(proxy.traffic.exchanges.at(-1)).toMatchObject({ refusedByProxy: 'malformed_request', status: 400 });
  });
});

/** VmRSS of a process, in bytes, from /proc. */
function rssOf(pid: number): number {
  const kb = /^VmRSS:\s+(\d+)\s+kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return Number(kb) * 1024;
}

/** Sends a body of `bytes` from a buffer of 1 MB written again and again, so the test holds no more than that. */
function sendLarge(base: string, key: string, bytes: number, chunked: boolean): Promise<Answer> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    const chunk = Buffer.alloc(1 << 20, 0x20);
    const framing = chunked ? 'Transfer-Encoding: chunked' : `Content-Length: ${bytes}`;
    // Kept alive, as a client that sends its whole body expects: the answer comes first, the body is drained, and the connection ends when the client ends it.
    socket.write(`POST /v1/avatars HTTP/1.1\r\nHost: ${hostname}:${port}\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\n${framing}\r\n\r\n`);
    let sent = 0;
    const pump = () => {
      while (sent < bytes) {
        sent += chunk.length;
        const piece = chunked ? Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n')]) : chunk;
        if (!socket.write(piece)) return void socket.once('drain', pump);
      }
      if (chunked) socket.end('0\r\n\r\n');
      else socket.end();
    };
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', reject);
    socket.on('end', () => {
      const text = Buffer.concat(chunks).toString('latin1');
      const status = Number(text.split(' ')[1]);
      const start = text.indexOf('{');
      resolve({ status, headers: {}, text: start < 0 ? '' : text.slice(start, text.lastIndexOf('}') + 1) });
    });
    pump();
  });
}

describe('the proxy as a process, under bodies far past the service\'s limit', () => {
  it('when two 100 MB creates pass through it (one with its length, one chunked), then each gets the service\'s 413 and the proxy\'s RSS stays under 400 MB', async () => {
    const child = spawn(process.execPath, [CLI, 'proxy', '--upstream', svc.url, '--listen', '0'], { env: { ...process.env, NO_COLOR: '1', CONFORMANCE_SIGNING_SECRET: '' }, stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let out = '';
        child.stdout.on('data', (c: Buffer) => {
          out += c.toString();
          const found = /http:\/\/127\.0\.0\.1:\d+/.exec(out.split('\n')[0] ?? '');
          if (out.includes('\n')) (found ? resolve(found[0]) : reject(new Error(out)));
        });
        child.once('exit', (code) => reject(new Error(`the proxy exited with ${code}`)));
      });
      const idle = rssOf(child.pid!);
      let peak = idle;
      const sample = setInterval(() => (peak = Math.max(peak, rssOf(child.pid!))), 50);
      try {
        for (const chunked of [false, true]) {
          const answer = await sendLarge(url, key, 100 * 1024 * 1024, chunked);
          expect(answer.status).toBe(413);
          expect(JSON.parse(answer.text)).toMatchObject({ code: 'payload_too_large', status: 413 });
        }
      } finally {
        clearInterval(sample);
      }
      const after = rssOf(child.pid!);
      const mb = (n: number) => `${Math.round(n / 1e6)} MB`;
      expect(Math.max(peak, after), `RSS ${mb(idle)} idle, ${mb(peak)} at peak, ${mb(after)} after`).toBeLessThan(400e6);
    } finally {
      child.kill('SIGKILL');
    }
  }, 90_000);
});
