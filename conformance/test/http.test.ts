import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAvatarClient } from '../../client/src/index.ts';
import { CHECKS } from '../src/checks/index.ts';
import { bucketOf, excerpt, Http } from '../src/http.ts';
import { selectChecks } from '../src/run.ts';

describe('Http', () => {
  const server = createServer((req, res) => {
    res.writeHead(req.url === '/v1/me' ? 200 : 404, { 'content-type': 'application/json', 'ratelimit-limit': '5', 'ratelimit-remaining': '4', 'ratelimit-reset': '9' });
    res.end(JSON.stringify({ ok: true, auth: req.headers.authorization ?? null }));
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
      sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
    });
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

  it('when the typed client calls through the adapter, then its requests are recorded and attributed to the key', async () => {
    const client = createAvatarClient({ baseUrl: http.baseUrl, apiKey: 'sk_test_secretvalue123', retry: false, fetch: http.fetchAdapter });
    const { response } = await client.getMe();
    expect(http.exchangeOf(response)?.key).toBe('main');
    expect(http.log.at(-1)?.path).toBe('/v1/me');
  });

  it.each([
    ['POST', '/v1/avatars', 'generation'],
    ['POST', '/v1/avatar-videos', 'generation'],
    ['GET', '/v1/me', 'read'],
    ['GET', '/v1/avatar-videos/vid_1', 'read'],
    ['GET', '/me', undefined],
  ] as const)('when %s %s, then the bucket is %s', (method, path, bucket) => {
    expect(bucketOf(method, path)).toBe(bucket);
  });
});

describe('selectChecks', () => {
  it.each([
    [['RL-429'], ['rate-limits.over-limit-429', 'rate-limits.retry-after-admits']],
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
