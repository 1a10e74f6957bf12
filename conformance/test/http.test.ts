import { createServer } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHECKS } from '../src/checks/index.ts';
import { ContractValidator } from '../src/contract.ts';
import { SandboxClock } from '../src/clock.ts';
import { excerpt, Http, type SendRequest, UnreachableError } from '../src/http.ts';
import { CONTRACT_PROFILE } from '../src/implementation/profile.ts';
import { Shape } from '../src/implementation/shape.ts';
import { selectChecks } from '../src/selection.ts';

describe('Http', () => {
  const validator = ContractValidator.load();
  const server = createServer((req, res) => {
    res.writeHead(req.url === '/v1/me' ? 200 : 404, { 'content-type': 'application/json', 'ratelimit-limit': '5', 'ratelimit-remaining': '4', 'ratelimit-reset': '9' });
    res.end(JSON.stringify({ ok: true, auth: req.headers.authorization ?? null, apiKey: req.headers['x-api-key'] ?? null }));
  });
  let baseUrl: string;
  let http: Http;
  const options = () => ({
    baseUrl,
    keys: { main: 'sk_test_secretvalue123' },
    requestTimeoutMs: 5000,
    maxRateLimitWaitSeconds: 10,
    now: Date.now,
    sleep: (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)),
    bucketOf: (method: string, path: string) => validator.match(method, path)?.bucket,
  });
  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    http = new Http(options());
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('when a request is recorded, then the key is redacted in the exchange and its excerpt', async () => {
    const exchange = await http.send({ key: 'main', method: 'GET', path: '/v1/me' });
    expect(exchange.requestHeaders.authorization).toBe('Bearer sk_test_…(redacted)');
    expect(excerpt(exchange, http.secrets)).not.toContain('secretvalue');
    expect(excerpt(exchange, http.secrets)).toContain('Bearer sk_test_…(redacted)');
    expect(exchange.bucket).toBe('read');
    expect(http.pacer.gate('main', 'read').remaining).toBe(4);
  });

  it('when the profile presents the key in its own header, then that header carries it and is redacted', async () => {
    const custom = new Http({ ...options(), credential: (token) => ['X-Api-Key', token] });
    const exchange = await custom.send({ key: 'main', method: 'GET', path: '/v1/me' });
    expect(exchange.json).toMatchObject({ auth: null, apiKey: 'sk_test_secretvalue123' });
    expect(exchange.requestHeaders['x-api-key']).toBe('sk_test_…(redacted)');
    expect(excerpt(exchange, custom.secrets)).not.toContain('secretvalue');
  });

  it.each([
    ['POST', '/v1/avatars', 'generation'],
    ['POST', '/v1/avatar-videos', 'generation'],
    ['GET', '/v1/me', 'read'],
    ['GET', '/v1/avatar-videos/vid_1', 'read'],
    ['GET', '/me', undefined],
  ] as const)('when %s %s, then the bucket is the contract\'s: %s', async (method, path, bucket) => {
    const exchange = await http.send({ key: 'main', method, path, ...(method === 'POST' ? { json: {} } : {}), on429: 'return' });
    expect(exchange.bucket).toBe(bucket);
  });
});

describe('Http with a sandbox clock', () => {
  const validator = ContractValidator.load();
  /** Seconds the server's account time was moved ahead, and every move. */
  let offsetSeconds = 0;
  const moves: number[] = [];
  /** The account time until which GET /v1/me is refused: a window far longer than the run may wait. */
  let refusedUntil: number | undefined;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.method === 'POST' && req.url === '/v1/test_helpers/clock/advance') {
        const { seconds } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { seconds: number };
        offsetSeconds += seconds;
        moves.push(seconds);
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
        return;
      }
      const now = Date.now() / 1000 + offsetSeconds;
      refusedUntil ??= now + LONG_RETRY_AFTER_SECONDS;
      if (now < refusedUntil) {
        const wait = String(Math.ceil(refusedUntil - now));
        res.writeHead(429, { 'content-type': 'application/json', 'retry-after': wait, 'ratelimit-limit': '5', 'ratelimit-remaining': '0', 'ratelimit-reset': wait }).end('{"code":"rate_limit_exceeded"}');
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json', 'ratelimit-limit': '5', 'ratelimit-remaining': '4', 'ratelimit-reset': '60' }).end('{}');
    });
  });
  /** Longer than the 10 s the run may wait in real time. */
  const LONG_RETRY_AFTER_SECONDS = 120;
  const slept: number[] = [];
  let baseUrl: string;
  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  function client(): Http {
    return new Http({
      baseUrl,
      keys: { main: 'sk_test_secretvalue123' },
      requestTimeoutMs: 5000,
      maxRateLimitWaitSeconds: 10,
      now: Date.now,
      // Never waited: a wait in real time here is the failure this test is about.
      sleep: async (ms: number) => void slept.push(ms),
      bucketOf: (method: string, path: string) => validator.match(method, path)?.bucket,
    });
  }

  it('when a 429 asks for longer than the run may wait and the key has a sandbox clock, then the clock is moved over it and the request sent again', async () => {
    const http = client();
    const clock = new SandboxClock(http, new Shape(CONTRACT_PROFILE), Date.now);
    await clock.detect(['main'], true);
    http.pacer.skip = (key, ms) => clock.moveOver(key as 'main', ms / 1000 + 1);

    const exchange = await http.send({ key: 'main', method: 'GET', path: '/v1/me' });

    expect(exchange.status).toBe(200);
    expect(exchange.retriedAfter429).toBe(1);
    // The one-second probe, then one move over the whole Retry-After.
    expect(moves).toHaveLength(2);
    expect(moves[1]).toBeGreaterThanOrEqual(LONG_RETRY_AFTER_SECONDS - 1);
    expect(slept).toEqual([]);
  });

  it('when a 429 asks for longer than the run may wait and the key has no clock, then it is handed back at once', async () => {
    refusedUntil = undefined;
    const http = client();

    const exchange = await http.send({ key: 'main', method: 'GET', path: '/v1/me' });

    expect(exchange.status).toBe(429);
    expect(exchange.retriedAfter429).toBe(0);
    expect(slept).toEqual([]);
  });
});

describe('Http when a reused connection is reset before the answer', () => {
  const validator = ContractValidator.load();
  /** How many requests each connection has carried. */
  const carried = new WeakMap<Socket, number>();
  /** Set by a test: how many requests to reset, from the next one that comes on a connection that carried one before. */
  let resets = 0;
  let resetting = false;
  const arrived: string[] = [];
  const server = createServer((req, res) => {
    const before = carried.get(req.socket) ?? 0;
    carried.set(req.socket, before + 1);
    arrived.push(`${req.method} ${req.url} on a ${before > 0 ? 'reused' : 'new'} connection`);
    if (resets > 0 && (before > 0 || resetting)) {
      resets--;
      resetting = resets > 0;
      // What a client sees when the server closed the connection as the request went out.
      req.socket.resetAndDestroy();
      return;
    }
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ ok: true }));
    });
  });
  let http: Http;
  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    http = new Http({
      baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      keys: { main: 'sk_test_secretvalue123' },
      requestTimeoutMs: 5000,
      maxRateLimitWaitSeconds: 10,
      now: Date.now,
      sleep: (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)),
      bucketOf: (method: string, path: string) => validator.match(method, path)?.bucket,
    });
  });
  afterAll(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });

  /** A first request, then the one under test on the connection it leaves open, armed to be reset. */
  async function onReusedConnection(request: Omit<SendRequest, 'key'> & { key?: SendRequest['key'] }, resetCount = 1) {
    await http.send({ key: 'main', method: 'GET', path: '/v1/me' });
    // The client puts the connection back among the idle ones on a later turn of the event loop.
    await new Promise<void>((resolve) => setImmediate(resolve));
    arrived.length = 0;
    resets = resetCount;
    return http.send({ key: 'main', ...request });
  }

  it.each([
    ['a GET', { method: 'GET', path: '/v1/me' }],
    ['a POST with an Idempotency-Key', { method: 'POST', path: '/v1/avatars', json: { name: 'x' }, headers: { 'Idempotency-Key': 'k-1' } }],
    ['a POST its caller marks safe to resend', { method: 'POST', path: '/v1/avatars', json: { name: 'x' }, resend: true }],
    // A correct service refuses these before they have any effect: twice is as once.
    ['a POST without a key', { method: 'POST', path: '/v1/avatars', json: { name: 'x' }, key: null }],
    ['a POST with a made-up key', { method: 'POST', path: '/v1/avatars', json: { name: 'x' }, key: { token: 'sk_test_madeUpKey0000000000000000' } }],
  ] as const)('when %s is reset, then it is sent once more on a new connection and the exchange says so', async (_name, request) => {
    const exchange = await onReusedConnection(request);
    expect(exchange.status).toBe(200);
    expect(arrived).toEqual([`${request.method} ${request.path} on a reused connection`, `${request.method} ${request.path} on a new connection`]);
    expect(exchange.note).toMatch(/^sent again on a new connection after ECONNRESET \(.*\) on a reused one, before any byte of the answer$/);
  });

  it('when a plain POST is reset, then it is not sent again: the service stopped answering', async () => {
    await expect(onReusedConnection({ method: 'POST', path: '/v1/avatars', json: { name: 'x' } })).rejects.toThrow(new UnreachableError('POST /v1/avatars: ECONNRESET (read ECONNRESET)'));
    expect(arrived).toEqual(['POST /v1/avatars on a reused connection']);
  });

  it('when the GET sent again is reset too, then the service stopped answering, and both resets are named', async () => {
    await expect(onReusedConnection({ method: 'GET', path: '/v1/me' }, 2)).rejects.toThrow(/^GET \/v1\/me: ECONNRESET \(read ECONNRESET\), after ECONNRESET \(read ECONNRESET\) on a reused connection$/);
    expect(arrived).toEqual(['GET /v1/me on a reused connection', 'GET /v1/me on a new connection']);
  });
});

describe('selectChecks', () => {
  it.each([
    [['RL-429'], ['rate-limits.over-limit-429', 'rate-limits.retry-after-admits', 'rate-limits.daily-windows']],
    [['webhooks.event-*'], ['webhooks.event-type-matches-state', 'webhooks.event-id-stable']],
    [['versioning'], ['versioning.v1-prefix']],
  ])('when --only %j, then exactly those checks run', (only, expected) => {
    expect(selectChecks(CHECKS, { only, skip: [] }).map((c) => c.id).sort()).toEqual([...expected].sort());
  });

  it('when --skip names a need, then the checks needing it are left out', () => {
    const ids = selectChecks(CHECKS, { only: [], skip: ['receiver'] }).map((c) => c.id);
    expect(ids).not.toContain('webhooks.signature');
    expect(ids).toContain('auth.key-required');
  });
});
