// The pieces that keep a run's bound: deadlines end every kind of wait the runner has,
// with a reason that names the wait, and the bound is worked out from what the run is
// told before it sends anything.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { planBound, statedBound } from '../src/bound.ts';
import { CHECKS } from '../src/checks/index.ts';
import { ContractValidator } from '../src/contract.ts';
import { deadline, LimitReached, RUN_SCOPE, sleepWithin } from '../src/deadline.ts';
import { Http } from '../src/http.ts';
import { resolveOptions, type RunOptions } from '../src/options.ts';
import { WebhookReceiver } from '../src/receiver/server.ts';
import { selectChecks } from '../src/selection.ts';

describe('deadlines', () => {
  const validator = ContractValidator.load();
  let requests = 0;
  let server: Server;
  let baseUrl: string;
  beforeAll(async () => {
    // Answers the first request at once and never answers the others.
    server = createServer((_req, res) => {
      if (++requests > 1) return;
      res.writeHead(200, { 'content-type': 'application/json', 'ratelimit-limit': '1', 'ratelimit-remaining': '0', 'ratelimit-reset': '60' });
      res.end('{}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  const client = () =>
    new Http({
      baseUrl,
      keys: { main: 'sk_test_deadline000000' },
      requestTimeoutMs: 30_000,
      maxRateLimitWaitSeconds: 120,
      now: Date.now,
      sleep: (ms) => new Promise<void>((resolve) => setTimeout(resolve, ms)),
      bucketOf: (method, path) => validator.match(method, path)?.bucket,
    });

  it('when a check reaches its limit while waiting for a webhook, then the wait ends at once, naming the attempt it waited for', async () => {
    const receiver = await WebhookReceiver.start({ host: '127.0.0.1', port: 0, secret: 'whsec_deadline', now: Date.now });
    const limit = deadline('webhooks.some-check', 100);
    try {
      const started = Date.now();
      const error = await receiver.within(limit.signal).waitFor('delivery-log', 1, 60_000).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(LimitReached);
      expect((error as LimitReached).message).toBe('webhooks.some-check reached its limit of 1 s, waiting for webhook attempt 1 of delivery-log');
      expect(Date.now() - started).toBeLessThan(2_000);
    } finally {
      limit.dispose();
      await receiver.close();
    }
  });

  it('when the limit comes while the window is full, then the paced request is never sent and the wait names the window', async () => {
    requests = 0;
    const http = client();
    // The first answer says the window is used up for 60 s.
    await http.send({ key: 'main', method: 'GET', path: '/v1/me' });
    const limit = deadline('some-check', 100);
    try {
      const error = await http.within(limit.signal).send({ key: 'main', method: 'GET', path: '/v1/me' }).catch((caught: unknown) => caught);
      expect((error as LimitReached).message).toMatch(/^some-check reached its limit of 1 s, waiting [\d.]+ s for the main key's read window$/);
      expect(requests).toBe(1);
    } finally {
      limit.dispose();
    }
  });

  it('when the limit comes while an answer is awaited, then the request ends with the limit, not as an unreachable service', async () => {
    requests = 1;
    const http = client();
    const limit = deadline('some-check', 100);
    try {
      const error = await http.within(limit.signal).send({ key: 'main', method: 'GET', path: '/v1/avatars/av_1', pace: false }).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(LimitReached);
      expect((error as LimitReached).waitingFor).toBe('waiting for the answer to GET /v1/avatars/av_1');
    } finally {
      limit.dispose();
    }
  });

  it('when an injected sleep ignores the signal, then the sleep still ends at the limit', async () => {
    const limit = deadline('some-check', 50);
    try {
      const started = Date.now();
      const deaf = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());
      await expect(sleepWithin(deaf, 60_000, limit.signal, 'pausing')).rejects.toThrow('some-check reached its limit of 1 s, pausing');
      expect(Date.now() - started).toBeLessThan(2_000);
    } finally {
      limit.dispose();
    }
  });

  it('when a deadline is extended, then it ends at its new limit from its start, naming the bound stated anew', async () => {
    const startedAt = Date.now();
    const run = deadline(RUN_SCOPE, 20, undefined, 1);
    run.extend(60, 2);
    await new Promise<void>((resolve) => run.signal.addEventListener('abort', () => resolve(), { once: true }));
    // Timers may fire a millisecond early, never 20 ms.
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(55);
    expect((run.signal.reason as LimitReached).message).toContain('bound of 2 s');
    run.dispose();
  });

  it("when the run's deadline ends, then a check's deadline under it ends with the run's reason", async () => {
    const run = deadline('the run', 50);
    const check = deadline('some-check', 60_000, run.signal);
    try {
      await expect(sleepWithin((ms, signal) => new Promise((resolve) => signal?.addEventListener('abort', () => resolve())), 60_000, check.signal, 'pausing')).rejects.toThrow(
        'the run reached its bound of 1 s, pausing',
      );
    } finally {
      check.dispose();
      run.dispose();
    }
  });
});

describe('the bound', () => {
  const base: RunOptions = { baseUrl: 'http://127.0.0.1:9', apiKey: 'sk_test_x', profile: 'contract', seed: 1 };
  const checks = (options: RunOptions) => selectChecks(CHECKS, resolveOptions(options));
  const seconds = (options: RunOptions, clock: boolean) => planBound(checks(options), resolveOptions(options), clock, true).seconds;

  it('when jobs or webhooks may take longer, then the bound grows by at least that much', () => {
    const bound = seconds(base, true);
    expect(seconds({ ...base, jobTimeoutSeconds: 400 }, true)).toBeGreaterThanOrEqual(bound + 2 * 100);
    expect(seconds({ ...base, webhookRetryTimeoutSeconds: 120 }, true)).toBeGreaterThan(bound + 60);
  });

  it('when windows are waited out instead of moved over, then the bound is longer; the stated one counts on the clock the profile names', () => {
    const options = resolveOptions(base);
    const selected = checks(base);
    expect(seconds(base, false)).toBeGreaterThan(seconds(base, true));
    expect(statedBound(selected, options, true, true).seconds).toBe(seconds(base, true));
    expect(statedBound(selected, options, false, true).seconds).toBe(seconds(base, false));
  });

  it('when fewer checks are selected, then the bound is shorter', () => {
    expect(seconds({ ...base, only: ['webhooks'] }, true)).toBeLessThan(seconds(base, true));
  });

  it('when a longest run is given, then the bound is capped there and says so', () => {
    const bound = planBound(checks(base), resolveOptions({ ...base, maxRunSeconds: 30 }), true, true);
    expect(bound).toMatchObject({ seconds: 30, cappedBy: 'max-run-seconds' });
  });
});
