import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHECKS } from '../src/checks/index.ts';
import { ContractValidator } from '../src/contract.ts';
import { excerpt, Http } from '../src/http.ts';
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
