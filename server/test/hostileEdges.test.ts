// The edges an attacker or a careless operator finds past the request bodies that
// hostile.test.ts generates: webhook addresses (trailing dots, link-local and metadata
// hosts, a refusal at delivery), what the delivery log tells of a failure, answers at
// the connection level, and what a start says. Seeded and bounded: HOSTILE_EDGES_SEED
// replays a run; every connection goes to 127.0.0.1, to local receivers, closed local
// ports or nowhere (names resolve through the test's resolver, refused addresses are
// never connected to).
import { createServer as createHttpServer, type Server } from 'node:http';
import { connect, createServer as createTcpServer, type AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import fc from 'fast-check';
import Koa from 'koa';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, startWarnings } from '../src/config.ts';
import { ATTEMPT_ERROR_CODES } from '../src/domain/attemptErrors.ts';
import { ArtifactUnavailableError } from '../src/domain/engine.ts';
import { eventIdFor } from '../src/domain/ids.ts';
import { StoreUnavailableError, errorForLog } from '../src/domain/ports.ts';
import { MAX_SHOWN_ATTEMPTS } from '../src/domain/webhookLog.ts';
import { errorHandler } from '../src/http/errors.ts';
import { requestId } from '../src/http/requestId.ts';
import type { ResolvedAddress } from '../src/workers/deliver.ts';
import { GENEROUS_PLAN, promptAvatar, startTestService, type Reply, type TestService } from './support/harness.ts';
import { startReceiver, type TestReceiver } from './support/receiver.ts';
import bundle from '../../generated/openapi.json' with { type: 'json' };
import { eventually } from './support/eventually.ts';

const SEED = Number(process.env.HOSTILE_EDGES_SEED ?? 20_261_126);
const settings = (numRuns: number) => ({ seed: SEED, numRuns, endOnFailure: true });

// --- addresses ---------------------------------------------------------------------

const dots = fc.integer({ min: 1, max: 4 }).map((n) => '.'.repeat(n));
const anyCase = (name: string) => fc.array(fc.boolean(), { minLength: name.length, maxLength: name.length }).map((up) => [...name].map((c, i) => (up[i] ? c.toUpperCase() : c)).join(''));
const byte = fc.integer({ min: 0, max: 255 });
const label = fc.stringMatching(/^[a-z][a-z0-9]{0,8}$/);

/** Local names a production server must refuse, each ending in one or more dots. */
const localNameWithDots = fc
  .tuple(fc.oneof(fc.constant('localhost'), label, label.map((l) => `${l}.localhost`), label.map((l) => `${l}.local`), label.map((l) => `${l}.internal`)), dots)
  .chain(([name, tail]) => anyCase(name).map((n) => n + tail));

/** Hosts the sandbox refuses: link-local (also inside IPv6 forms) and cloud metadata addresses and names. */
const linkLocalOrMetadataHost = fc.oneof(
  fc.tuple(byte, byte).map(([a, b]) => `169.254.${a}.${b}`),
  // The spellings the URL parser reads as the same address: one number, hex, octal.
  fc.tuple(byte, byte).map(([a, b]) => String(((169 * 256 + 254) * 256 + a) * 256 + b)),
  fc.tuple(byte, byte).map(([a, b]) => `0xa9.0xfe.0x${a.toString(16)}.${b}`),
  fc.tuple(byte, byte).map(([a, b]) => `0251.0376.0${a.toString(8)}.${b}`),
  fc.tuple(byte, byte).map(([a, b]) => `[::ffff:169.254.${a}.${b}]`),
  fc.integer({ min: 0x80, max: 0xbf }).chain((second) => fc.integer({ min: 0, max: 0xffff }).map((tail) => `[fe${second.toString(16)}::${tail.toString(16)}]`)),
  fc.constantFrom('[fd00:ec2::254]', '100.100.100.200', '168.63.129.16', '[64:ff9b::a9fe:a9fe]', '[2002:a9fe:a9fe::1]'),
  fc.tuple(fc.constantFrom('metadata.google.internal', 'metadata', 'instance-data.ec2.internal', 'metadata.goog'), fc.integer({ min: 0, max: 3 })).chain(([name, n]) => anyCase(name).map((h) => h + '.'.repeat(n))),
);

/** Hosts the sandbox keeps for local receivers and ordinary targets, beyond this machine's loopback. */
const sandboxAllowedHost = fc.oneof(
  fc.tuple(byte, byte, byte).map(([a, b, c]) => `10.${a}.${b}.${c}`),
  fc.tuple(byte, byte).map(([a, b]) => `192.168.${a}.${b}`),
  fc.integer({ min: 0, max: 0xffff }).map((n) => `[fd12:3456::${n.toString(16)}]`),
  label.map((l) => `${l}.example.com`),
);

describe(`webhook addresses (seed ${SEED})`, () => {
  let sandbox: TestService;
  let production: TestService;
  let broke: string;
  let brokeInProduction: string;
  beforeAll(async () => {
    sandbox = await startTestService();
    production = await startTestService({ env: { SERVICE_MODE: 'production', PUBLIC_BASE_URL: 'https://avatars.example.com' } });
    // No credits: a URL the rules accept is answered 402 and nothing is made or delivered.
    broke = (await sandbox.account({ plan: GENEROUS_PLAN, credits: 0 })).api_key;
    brokeInProduction = (await production.account({ plan: GENEROUS_PLAN, credits: 0 })).api_key;
  });
  afterAll(async () => {
    await sandbox?.dispose();
    await production?.dispose();
  });

  it('in production, a local name ending in any number of dots is refused as the name itself, and so is every link-local or metadata host', async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(localNameWithDots, linkLocalOrMetadataHost), async (host) => {
        const r = await production.request('POST', '/v1/avatars', { key: brokeInProduction, json: promptAvatar({ webhook_url: `https://${host}/hook` }) });
        expect(r.status, host).toBe(422);
        expect(r.body.errors).toEqual([{ field: 'webhook_url', rule: 'public_host_required', message: expect.any(String) }]);
      }),
      settings(60),
    );
  });

  it('in the sandbox, link-local and metadata hosts are refused with 422; private and other hosts are accepted (402 for an account without credits)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.boolean(), linkLocalOrMetadataHost, sandboxAllowedHost, async (refusedOne, refusedHost, allowedHost) => {
        const host = refusedOne ? refusedHost : allowedHost;
        const r = await sandbox.request('POST', '/v1/avatars', { key: broke, json: promptAvatar({ webhook_url: `http://${host}/hook` }) });
        if (refusedOne) {
          expect(r.status, host).toBe(422);
          expect(r.body.errors).toEqual([{ field: 'webhook_url', rule: 'link_local_refused', message: expect.any(String) }]);
        } else {
          expect(r.status, host).toBe(402);
          expect(r.body.code).toBe('insufficient_credits');
        }
      }),
      settings(60),
    );
    expect(await sandbox.activeJobs()).toBe(0);
    expect((await sandbox.request('GET', '/v1/webhook-events', { key: broke })).body.data).toEqual([]);
    expect((await sandbox.request('GET', '/v1/avatars', { key: broke })).body.data).toEqual([]);
  });
});

// --- delivery and its log ----------------------------------------------------------

describe(`a failed delivery in the log (seed ${SEED})`, () => {
  let svc: TestService;
  let receiver: TestReceiver;
  let key: string;
  const others: Server[] = [];
  const resolve = async (host: string): Promise<ResolvedAddress[]> => {
    if (host === 'meta.test') return [{ address: '169.254.169.254', family: 4 }];
    if (host === 'nowhere.test') throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return [{ address: '127.0.0.1', family: 4 }];
  };
  beforeAll(async () => {
    receiver = await startReceiver();
    receiver.script = (path) => (path === '/hang' ? 'hang' : path === '/moved' ? { status: 302, headers: { Location: 'http://169.254.169.254/' } } : { status: 500 });
    // Two scheduled attempts each: a refusal that ends the event at once shows as one.
    svc = await startTestService({
      env: { WEBHOOK_MAX_ATTEMPTS: '2', WEBHOOK_BASE_DELAY_MS: '30', WEBHOOK_POLL_MS: '20', WEBHOOK_TIMEOUT_MS: '800' },
      resolve,
      random: () => 0.5,
    });
    key = (await svc.account({ plan: GENEROUS_PLAN, credits: 100_000 })).api_key;
  });
  afterAll(async () => {
    await svc?.dispose();
    await receiver?.close();
    for (const s of others) s.close();
  });

  /** Creates an avatar whose webhook goes to `url` and returns its event once it has ended. */
  async function endedEvent(url: string): Promise<any> {
    const created = await svc.request('POST', '/v1/avatars', { key, json: promptAvatar({ webhook_url: url }) });
    expect(created.status, url).toBe(202);
    const id = eventIdFor(created.body.id, 'avatar.ready');
    const read = await eventually(() => svc.request('GET', `/v1/webhook-events/${id}`, { key }), (r: Reply) => r.body.status === 'failed');
    return read.body;
  }

  async function closedPort(): Promise<number> {
    const server = createTcpServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const { port } = server.address() as AddressInfo;
    await new Promise((r) => server.close(r));
    return port;
  }

  it('says what happened in a category the account can act on, never an address, a port or what answered', async () => {
    const port = new URL(receiver.url).port;
    const cases: [string, string][] = [
      [`http://127.0.0.1:${await closedPort()}/hook`, 'connection_refused'],
      [`${receiver.url}/status`, 'receiver_status'],
      [`${receiver.url}/moved`, 'receiver_status'],
      [`${receiver.url}/hang`, 'timeout'],
      [`https://127.0.0.1:${port}/plain-http-speaks-no-tls`, 'tls_failure'],
      ['http://nowhere.test/hook', 'name_not_found'],
    ];
    for (const [url, code] of cases) {
      const event = await endedEvent(url);
      expect(event.attempts[0], url).toMatchObject({ number: 1, succeeded: false, error_code: code, error: expect.any(String) });
      const told = event.attempts.map((a: { error: string }) => a.error).join('\n');
      expect(told, url).not.toMatch(/\d+\.\d+\.\d+\.\d+|:\d{2,5}\b|ECONN|ENOTFOUND|getaddrinfo|Parse Error|SSL|wrong version|\b\d{4,5}\b/);
    }
    receiver.dropHanging();
  });

  it('never echoes what a service that is not HTTP sent (its banner)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c)), minLength: 6, maxLength: 40 }), async (banner) => {
        const server = createTcpServer((socket) => socket.end(`SSH-2.0-${banner}\r\n`));
        others.push(server as unknown as Server);
        await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
        const event = await endedEvent(`http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`);
        server.close();
        expect(event.attempts[0].error_code).toBe('invalid_response');
        expect(JSON.stringify(event.attempts)).not.toContain(banner);
        expect(JSON.stringify(event.attempts)).not.toContain('SSH-2.0');
      }),
      settings(4),
    );
  });

  it('ends an event whose name resolves to a metadata address at once, never connecting, recorded as refused by policy', async () => {
    const event = await endedEvent('http://meta.test/latest/meta-data');

    expect(event.attempts_total).toBe(1);
    expect(event.attempts).toEqual([expect.objectContaining({ number: 1, status_code: null, error_code: 'refused_by_policy', succeeded: false })]);
    expect(event.attempts[0].error).not.toContain('169.254');
  });

  it('shows the latest attempts of an event replayed many times, and how many it had; a raw error an older attempt kept is shown as its category', async () => {
    const event = await endedEvent(`${receiver.url}/status`);
    const raw = ['connect ECONNREFUSED 127.0.0.1:47199', 'refused: host hooks.example.com resolves to non-public address 10.0.0.1', 'Parse Error: Expected HTTP/', 'DNS lookup failed: getaddrinfo ENOTFOUND db.internal'];
    const total = MAX_SHOWN_ATTEMPTS + 15;
    for (let n = event.attempts_total + 1; n <= total; n++) {
      await svc.store.outbox.markFailed(event.id, n, { trigger: 'replay', startedAt: Date.now(), durationMs: 1, statusCode: null, error: raw[n % raw.length]! }, 'unknown');
    }

    const read = (await svc.request('GET', `/v1/webhook-events/${event.id}`, { key })).body;

    expect(read.attempts_total).toBe(total);
    expect(read.attempts.map((a: { number: number }) => a.number)).toEqual(Array.from({ length: MAX_SHOWN_ATTEMPTS }, (_, i) => total - MAX_SHOWN_ATTEMPTS + 1 + i));
    expect(new Set(read.attempts.map((a: { error_code: string }) => a.error_code))).toEqual(new Set(['connection_refused', 'refused_by_policy', 'invalid_response', 'name_not_found']));
    expect(JSON.stringify(read.attempts)).not.toMatch(/127\.0\.0\.1|10\.0\.0\.1|47199|db\.internal|getaddrinfo|Expected HTTP/);
  });

  it('documents every category in the contract', () => {
    const attempt = (bundle as any).components.schemas.WebhookAttempt.properties.error_code.description as string;
    for (const code of ATTEMPT_ERROR_CODES) expect(attempt, code).toContain(`\`${code}\``);
  });
});

// --- answers at the connection level -----------------------------------------------

describe(`answers at the connection level (seed ${SEED})`, () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService();
  });
  afterAll(() => svc?.dispose());

  /** Everything the server writes to raw bytes until it closes the connection (or 2 s pass, which fails the case). */
  function raw(request: string): Promise<string> {
    const { port } = new URL(svc.url);
    return new Promise((resolve) => {
      const socket = connect(Number(port), '127.0.0.1', () => socket.write(request));
      let text = '';
      const timer = setTimeout(() => socket.destroy(), 2000);
      socket.on('data', (c) => (text += c.toString('latin1')));
      socket.on('error', () => {});
      socket.on('close', () => {
        clearTimeout(timer);
        resolve(text);
      });
    });
  }

  const path = fc.constantFrom('/v1/me', '/v1/avatars', '/v1/avatar-videos', '/v1/webhook-events', '/v1/avatars/av_x', '/nowhere');
  const token = fc.stringMatching(/^[a-z]{1,10}$/);
  const request = fc.oneof(
    fc.tuple(fc.constantFrom('GET', 'POST', 'DELETE'), path).map(([m, p]) => ({ kind: 'no Host', text: `${m} ${p} HTTP/1.1\r\nContent-Length: 0\r\n\r\n`, status: 400 })),
    fc.tuple(path, label, label).map(([p, a, b]) => ({ kind: 'two Hosts', text: `GET ${p} HTTP/1.1\r\nHost: ${a}\r\nhost: ${b}\r\n\r\n`, status: 400 })),
    fc.tuple(label, fc.integer({ min: 1, max: 65535 })).map(([h, p]) => ({ kind: 'CONNECT', text: `CONNECT ${h}.example:${p} HTTP/1.1\r\nHost: ${h}.example:${p}\r\n\r\n`, status: 405 })),
    fc.tuple(path, token.filter((t) => t !== 'chunked' && t !== 'identity')).map(([p, te]) => ({ kind: 'Transfer-Encoding', text: `POST ${p} HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: ${te}\r\n\r\nabc`, status: 400 })),
    fc.tuple(path, fc.stringMatching(/^[g-z!~]{1,6}$/)).map(([p, size]) => ({ kind: 'chunk size', text: `POST ${p} HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n${size}\r\nabc\r\n0\r\n\r\n`, status: 400 })),
    fc.constantFrom('/v1/me', '/v1/avatars', '/v1/webhook-events').map((p) => ({ kind: 'OPTIONS', text: `OPTIONS ${p} HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n`, status: 405 })),
    fc.tuple(fc.constantFrom('/healthz', '/metrics'), fc.constantFrom('POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS')).map(([p, m]) => ({ kind: `${m} ${p}`, text: `${m} ${p} HTTP/1.1\r\nHost: t\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`, status: 405 })),
  );

  it('is a problem with a request ID for every request the server refuses before or while reading it', async () => {
    await fc.assert(
      fc.asyncProperty(request, async ({ kind, text, status }) => {
        const answer = await raw(text);
        const [head = '', ...rest] = answer.split('\r\n\r\n');
        expect(Number(head.slice(9, 12)), `${kind}: ${JSON.stringify(answer)}`).toBe(status);
        expect(head, kind).toMatch(/\r\ncontent-type: application\/problem\+json/i);
        const body = JSON.parse(rest.join('\r\n\r\n'));
        expect(body).toMatchObject({ status, request_id: expect.stringMatching(/^req_/) });
        expect(head.toLowerCase(), kind).toContain(`x-request-id: ${body.request_id}`);
        if (status === 405) expect(head, kind).toMatch(/\r\nallow:/i);
      }),
      settings(50),
    );
  });
});

// --- start-up ----------------------------------------------------------------------

describe(`what a start says (seed ${SEED})`, () => {
  const beyondLoopback = fc.oneof(
    fc.constantFrom('0.0.0.0', '::', '[::]'),
    fc.tuple(byte, byte).map(([a, b]) => `192.168.${a}.${b}`),
    fc.tuple(byte, byte, byte).map(([a, b, c]) => `10.${a}.${b}.${c}`),
  );

  it('warns in one line of a sandbox listening beyond loopback, whether SERVICE_MODE says sandbox or nothing', () => {
    fc.assert(
      fc.property(beyondLoopback, fc.constantFrom(undefined, 'sandbox'), (host, mode) => {
        const lines = startWarnings(loadConfig({ HOST: host, ...(mode ? { SERVICE_MODE: mode } : {}) }));
        expect(lines).toHaveLength(1);
        expect(lines[0]).toMatch(/^warning: sandbox mode [^\n]*SERVICE_MODE=production/);
      }),
      settings(30),
    );
  });

  it('refuses production without PUBLIC_BASE_URL, naming it, whatever else is set', () => {
    fc.assert(
      fc.property(fc.option(beyondLoopback, { nil: undefined }), fc.integer({ min: 0, max: 65535 }), (host, port) => {
        const env = { SERVICE_MODE: 'production', PORT: String(port), ...(host ? { HOST: host } : {}) };
        expect(() => loadConfig(env)).toThrow(ConfigError);
        expect(() => loadConfig(env)).toThrow(/^SERVICE_MODE=production needs PUBLIC_BASE_URL/);
      }),
      settings(30),
    );
  });

  it('logs a refusal it expects (a render the engine is too busy for: 503) in one line without a stack, and a broken render with its stack', async () => {
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({
      write(chunk, _encoding, done) {
        lines.push(JSON.parse(String(chunk)));
        done();
      },
    });
    const app = new Koa();
    app.silent = true;
    app.use(requestId as Koa.Middleware);
    app.use(errorHandler(pino({ level: 'info' }, sink)) as Koa.Middleware);
    app.use((ctx) => {
      throw new ArtifactUnavailableError(ctx.path === '/busy' ? '16 videos are being rendered already' : 'FFmpeg exited 1', { retryable: ctx.path === '/busy' });
    });
    const server = createHttpServer(app.callback());
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const busy = await fetch(`${base}/busy`);
      const broken = await fetch(`${base}/broken`);
      expect([busy.status, broken.status]).toEqual([503, 500]);
    } finally {
      await new Promise((r) => server.close(r));
    }

    const [expected, unexpected] = lines;
    expect(expected).toMatchObject({ level: 40, reason: '16 videos are being rendered already' });
    expect(JSON.stringify(expected)).not.toMatch(/"stack"|\n\s+at /);
    expect(unexpected).toMatchObject({ level: 50, err: { stack: expect.stringContaining('FFmpeg exited 1') } });
  });

  it('logs the store out of reach, which the workers retry on every poll, by its message alone; an error nobody foresaw keeps its stack', () => {
    const outage = errorForLog(new StoreUnavailableError('connect ECONNREFUSED to the database'));
    const bug = new TypeError('undefined is not a function');

    expect(outage).toEqual({ type: 'StoreUnavailableError', message: 'connect ECONNREFUSED to the database' });
    expect(errorForLog(bug)).toBe(bug);
  });
});
