import type { AddressInfo } from 'node:net';
import { createServer, type Server } from 'node:http';
import Router from '@koa/router';
import Koa from 'koa';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiError, WaitTimeoutError, createAvatarClient, retryAfterSeconds } from '../src/index.ts';

let server: Server | undefined;
afterEach(async () => {
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
  server = undefined;
});

/** A fake clock whose sleep advances time instead of waiting. */
function fakeTime(start = 1_000_000) {
  let now = start;
  const sleeps: number[] = [];
  return {
    sleeps,
    now: () => now,
    sleep: async (ms: number) => {
      sleeps.push(ms);
      now += ms;
    },
  };
}

function avatar(id: string, status: string) {
  return {
    id,
    object: 'avatar',
    type: 'prompt',
    name: 'n',
    prompt: 'p',
    status,
    preview_image_url: null,
    webhook_url: null,
    credits: 10,
    error: status === 'failed' ? { code: 'generation_failed', message: 'x' } : null,
    created_at: '2026-01-01T00:00:00Z',
    updated_at: '2026-01-01T00:00:00Z',
    completed_at: null,
  };
}

interface Stub {
  requests: { method: string; path: string; auth: string | undefined; idempotencyKey: string | undefined; body: unknown }[];
  baseUrl: string;
}

/** A small stub of the API: 429 with Retry-After first, then the real answer. */
async function startStub(setup: (router: Router, stub: Stub) => void): Promise<Stub> {
  const app = new Koa();
  const router = new Router();
  const stub: Stub = { requests: [], baseUrl: '' };
  app.use(async (ctx, next) => {
    let text = '';
    for await (const chunk of ctx.req) text += String(chunk);
    stub.requests.push({ method: ctx.method, path: ctx.path, auth: ctx.get('authorization') || undefined, idempotencyKey: ctx.get('idempotency-key') || undefined, body: text ? JSON.parse(text) : undefined });
    (ctx.request as { body?: unknown }).body = text ? JSON.parse(text) : undefined;
    await next();
  });
  setup(router, stub);
  app.use(router.routes());
  server = createServer(app.callback());
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  stub.baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return stub;
}

function tooMany(ctx: Koa.Context, headers: Record<string, string>) {
  ctx.status = 429;
  ctx.set(headers);
  ctx.type = 'application/problem+json';
  ctx.body = { type: '/problems/rate_limit_exceeded', title: 'Too many', status: 429, code: 'rate_limit_exceeded', detail: 'd', request_id: 'r' };
}

describe('createAvatarClient', () => {
  it('when calling, then the key is sent as a bearer token', async () => {
    const stub = await startStub((router) => {
      router.get('/v1/avatars/:id', (ctx) => {
        ctx.body = avatar(ctx.params.id!, 'queued');
      });
    });
    const client = createAvatarClient({ baseUrl: stub.baseUrl, apiKey: 'sk_test_abc' });
    const { data } = await client.getAvatar('av_1');
    expect(data?.status).toBe('queued');
    expect(stub.requests[0]?.auth).toBe('Bearer sk_test_abc');
  });

  it('when answered 429 with Retry-After, then it waits at least that long before retrying (RL-CLIENT-WAIT)', async () => {
    let calls = 0;
    const stub = await startStub((router) => {
      router.post('/v1/avatars', (ctx) => {
        calls++;
        if (calls === 1) return tooMany(ctx, { 'Retry-After': '3', 'RateLimit-Reset': '3' });
        ctx.status = 202;
        ctx.body = avatar('av_2', 'queued');
      });
    });
    const time = fakeTime();
    const client = createAvatarClient({ baseUrl: stub.baseUrl, apiKey: 'k', sleep: time.sleep, now: time.now });
    const { data, response } = await client.createAvatar({ type: 'prompt', name: 'n', prompt: 'p' });
    expect(response.status).toBe(202);
    expect(data?.id).toBe('av_2');
    expect(time.sleeps).toEqual([3000]);
    // The retry carried the same body: a Request body is read once, so each attempt is a copy.
    expect(stub.requests.map((r) => r.body)).toEqual([
      { type: 'prompt', name: 'n', prompt: 'p' },
      { type: 'prompt', name: 'n', prompt: 'p' },
    ]);
  });

  it('when creating, then it sends a new Idempotency-Key per call and the same one on its retries (ND-IDEMPOTENCY)', async () => {
    let calls = 0;
    const stub = await startStub((router) => {
      router.post('/v1/avatar-videos', (ctx) => {
        calls++;
        if (calls === 1) return tooMany(ctx, { 'Retry-After': '1' });
        ctx.status = 202;
        ctx.body = { ...avatar('vid_1', 'queued'), object: 'avatar_video' };
      });
    });
    const time = fakeTime();
    const client = createAvatarClient({ baseUrl: stub.baseUrl, apiKey: 'k', sleep: time.sleep, now: time.now });

    await client.createAvatarVideo({ avatar_id: 'av_1', script: 's' });
    await client.createAvatarVideo({ avatar_id: 'av_1', script: 's' });
    await client.createAvatarVideo({ avatar_id: 'av_1', script: 's' }, { idempotencyKey: 'order-42' });

    const keys = stub.requests.map((r) => r.idempotencyKey);
    expect(keys).toHaveLength(4);
    expect(keys[0]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(keys[1]).toBe(keys[0]);
    expect(keys[2]).not.toBe(keys[0]);
    expect(keys[3]).toBe('order-42');
  });

  it('when a create gets no answer at all, then it is sent again with its key; a POST without a key is not', async () => {
    let calls = 0;
    const stub = await startStub((router) => {
      router.post('/v1/avatars', (ctx) => {
        calls++;
        // The connection drops before any answer: the client cannot know what happened.
        if (calls === 1) return void ctx.req.socket.destroy();
        ctx.status = 202;
        ctx.body = avatar('av_9', 'queued');
      });
      router.post('/v1/test_helpers/clock/advance', (ctx) => void ctx.req.socket.destroy());
    });
    const time = fakeTime();
    const client = createAvatarClient({ baseUrl: stub.baseUrl, apiKey: 'k', sleep: time.sleep, now: time.now });

    const { data } = await client.createAvatar({ type: 'prompt', name: 'n', prompt: 'p' });
    await expect(client.advanceSandboxClock({ seconds: 60 })).rejects.toThrow();

    expect(data?.id).toBe('av_9');
    const creates = stub.requests.filter((r) => r.path === '/v1/avatars');
    expect(creates).toHaveLength(2);
    expect(creates[1]?.idempotencyKey).toBe(creates[0]?.idempotencyKey);
    expect(stub.requests.filter((r) => r.path === '/v1/test_helpers/clock/advance')).toHaveLength(1);
    expect(time.sleeps).toEqual([1000]);
  });

  it('when iterating a list, then it follows next_cursor page by page and yields every record once', async () => {
    const stub = await startStub((router) => {
      router.get('/v1/avatars', (ctx) => {
        const pages: Record<string, { ids: string[]; next: string | null }> = { '': { ids: ['av_3', 'av_2'], next: 'c1' }, c1: { ids: ['av_1'], next: null } };
        const page = pages[String(ctx.query.cursor ?? '')]!;
        ctx.body = { object: 'list', data: page.ids.map((id) => avatar(id, 'ready')), has_more: page.next !== null, next_cursor: page.next };
      });
    });
    const client = createAvatarClient({ baseUrl: stub.baseUrl, apiKey: 'k' });

    const ids: string[] = [];
    for await (const record of client.eachAvatar({ status: 'ready', limit: 2 })) ids.push(record.id);

    expect(ids).toEqual(['av_3', 'av_2', 'av_1']);
    expect(stub.requests.map((r) => r.path)).toEqual(['/v1/avatars', '/v1/avatars']);
  });

  it('when reading the delivery log, then it pages by job and state; a replay is a POST with no body, sent once, whose 409 comes back as is', async () => {
    const event = (id: string, status: string) => ({ id, object: 'webhook_event', type: 'avatar.ready', job_id: 'av_1', url: 'https://h.example/x', status, created_at: '2026-01-01T00:00:00Z', next_attempt_at: null, delivered_at: null, attempts: [], payload: {} });
    const stub = await startStub((router) => {
      router.get('/v1/webhook-events', (ctx) => {
        const last = ctx.query.cursor === 'c1';
        ctx.body = { object: 'list', data: [event(last ? 'evt_1' : 'evt_2', String(ctx.query.status))], has_more: !last, next_cursor: last ? null : 'c1' };
      });
      router.get('/v1/webhook-events/:id', (ctx) => {
        ctx.body = event(ctx.params.id!, 'failed');
      });
      router.post('/v1/webhook-events/:id/replay', (ctx) => {
        ctx.status = 409;
        ctx.type = 'application/problem+json';
        ctx.body = { type: '/problems/webhook_event_pending', title: 'Webhook event pending', status: 409, code: 'webhook_event_pending', detail: 'd', request_id: 'r' };
      });
    });
    const client = createAvatarClient({ baseUrl: stub.baseUrl, apiKey: 'k' });

    const ids: string[] = [];
    for await (const record of client.eachWebhookEvent({ job_id: 'av_1', status: 'failed' })) ids.push(`${record.id}:${record.status}`);
    const one = await client.getWebhookEvent('evt_1');
    const replay = await client.replayWebhookEvent('evt_1');

    expect(ids).toEqual(['evt_2:failed', 'evt_1:failed']);
    expect(one.data?.status).toBe('failed');
    expect(replay.response.status).toBe(409);
    expect(replay.error?.code).toBe('webhook_event_pending');
    expect(stub.requests.map((r) => `${r.method} ${r.path}`)).toEqual(['GET /v1/webhook-events', 'GET /v1/webhook-events', 'GET /v1/webhook-events/evt_1', 'POST /v1/webhook-events/evt_1/replay']);
    expect(stub.requests.at(-1)!.body).toBeUndefined();
  });

  it('when Retry-After is beyond the caller bound, then it returns the 429 without waiting', async () => {
    const stub = await startStub((router) => {
      router.get('/v1/me', (ctx) => tooMany(ctx, { 'Retry-After': '40' }));
    });
    const time = fakeTime();
    const client = createAvatarClient({ baseUrl: stub.baseUrl, apiKey: 'k', sleep: time.sleep, now: time.now, retry: { maxWaitSeconds: 30 } });
    const { error, response } = await client.getMe();
    expect(response.status).toBe(429);
    expect(error?.code).toBe('rate_limit_exceeded');
    expect(time.sleeps).toEqual([]);
  });

  it('when 429s keep coming, then it stops after maxAttempts and the total wait stays within the bound', async () => {
    const stub = await startStub((router) => {
      router.get('/v1/me', (ctx) => tooMany(ctx, { 'Retry-After': '10' }));
    });
    const time = fakeTime();
    const client = createAvatarClient({ baseUrl: stub.baseUrl, apiKey: 'k', sleep: time.sleep, now: time.now, retry: { maxAttempts: 3, maxWaitSeconds: 25 } });
    const { response } = await client.getMe();
    expect(response.status).toBe(429);
    expect(time.sleeps).toEqual([10_000, 10_000]);
    expect(stub.requests).toHaveLength(3);
  });

  it('when retrying is off, then a 429 comes straight back', async () => {
    const stub = await startStub((router) => {
      router.get('/v1/me', (ctx) => tooMany(ctx, { 'Retry-After': '1' }));
    });
    const time = fakeTime();
    const client = createAvatarClient({ baseUrl: stub.baseUrl, apiKey: 'k', sleep: time.sleep, retry: false });
    expect((await client.getMe()).response.status).toBe(429);
    expect(time.sleeps).toEqual([]);
  });

  it('when a job becomes ready after N polls, then waitForTerminal backs off exponentially with jitter (RL-CLIENT-BACKOFF)', async () => {
    const N = 6;
    let polls = 0;
    const stub = await startStub((router) => {
      router.get('/v1/avatars/:id', (ctx) => {
        polls++;
        ctx.body = avatar(ctx.params.id!, polls >= N ? 'ready' : polls > 2 ? 'processing' : 'queued');
      });
    });
    const time = fakeTime();
    const client = createAvatarClient({ baseUrl: stub.baseUrl, apiKey: 'k', sleep: time.sleep, now: time.now, random: () => 0.5 });
    const seen: string[] = [];
    const record = await client.waitForTerminal('avatar', 'av_9', {
      initialDelayMs: 1000,
      maxDelayMs: 8000,
      deadlineMs: 120_000,
      onPoll: (r) => seen.push(r.status),
    });
    expect(record.status).toBe('ready');
    expect(polls).toBe(N);
    expect(seen).toEqual(['queued', 'queued', 'processing', 'processing', 'processing', 'ready']);
    // Steps 1, 2, 4, 8, 8 s; with random() = 0.5 each wait is three quarters of its step.
    expect(time.sleeps).toEqual([750, 1500, 3000, 6000, 6000]);
  });

  it('when jitter is drawn, then every wait stays within [half, all] of its step and never shrinks the step', async () => {
    const stub = await startStub((router) => {
      router.get('/v1/avatar-videos/:id', (ctx) => {
        ctx.body = { ...avatar(ctx.params.id!, 'processing'), object: 'avatar_video' };
      });
    });
    for (const random of [() => 0, () => 0.999]) {
      const time = fakeTime();
      const client = createAvatarClient({ baseUrl: stub.baseUrl, apiKey: 'k', sleep: time.sleep, now: time.now, random });
      await expect(client.waitForTerminal('avatar_video', 'vid_1', { initialDelayMs: 500, maxDelayMs: 4000, deadlineMs: 20_000 })).rejects.toBeInstanceOf(WaitTimeoutError);
      const steps = [500, 1000, 2000, 4000, 4000, 4000, 4000, 4000];
      time.sleeps.forEach((ms, i) => {
        const step = steps[i] ?? 4000;
        expect(ms).toBeGreaterThanOrEqual(step / 2);
        expect(ms).toBeLessThanOrEqual(step);
      });
      // No tight loop: the polls within 20 s stay few.
      expect(time.sleeps.length).toBeLessThanOrEqual(13);
    }
  });

  it('when the deadline passes first, then WaitTimeoutError carries the last record', async () => {
    const stub = await startStub((router) => {
      router.get('/v1/avatars/:id', (ctx) => {
        ctx.body = avatar(ctx.params.id!, 'processing');
      });
    });
    const time = fakeTime();
    const client = createAvatarClient({ baseUrl: stub.baseUrl, apiKey: 'k', sleep: time.sleep, now: time.now, random: () => 1 });
    const error = await client.waitForTerminal('avatar', 'av_1', { initialDelayMs: 1000, maxDelayMs: 2000, deadlineMs: 5000 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WaitTimeoutError);
    expect((error as WaitTimeoutError).last?.status).toBe('processing');
    expect(time.now() - 1_000_000).toBeLessThanOrEqual(5000);
  });

  it('when polling is rate limited, then the poll waits out Retry-After and carries on', async () => {
    let polls = 0;
    const stub = await startStub((router) => {
      router.get('/v1/avatars/:id', (ctx) => {
        polls++;
        if (polls === 2) return tooMany(ctx, { 'Retry-After': '5' });
        ctx.body = avatar(ctx.params.id!, polls >= 3 ? 'failed' : 'queued');
      });
    });
    const time = fakeTime();
    const client = createAvatarClient({ baseUrl: stub.baseUrl, apiKey: 'k', sleep: time.sleep, now: time.now, random: () => 1 });
    const record = await client.waitForTerminal('avatar', 'av_1', { initialDelayMs: 1000 });
    expect(record.status).toBe('failed');
    expect(time.sleeps).toEqual([1000, 5000]);
  });

  it('when the job does not exist, then waitForTerminal throws ApiError with the problem', async () => {
    const stub = await startStub((router) => {
      router.get('/v1/avatars/:id', (ctx) => {
        ctx.status = 404;
        ctx.type = 'application/problem+json';
        ctx.body = { type: '/problems/not_found', title: 'Not found', status: 404, code: 'not_found', detail: 'd', request_id: 'r' };
      });
    });
    const client = createAvatarClient({ baseUrl: stub.baseUrl, apiKey: 'k' });
    const error = await client.waitForTerminal('avatar', 'av_x').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).status).toBe(404);
    expect((error as ApiError).problem?.code).toBe('not_found');
  });
});

describe('retryAfterSeconds', () => {
  it.each([
    [{ 'retry-after': '7' }, 7],
    [{ 'retry-after': new Date(1_000_000 + 9_500).toUTCString() }, 9],
    [{ 'ratelimit-reset': '12' }, 12],
    [{ 'retry-after': 'soon', 'ratelimit-reset': '4' }, 4],
    [{}, undefined],
  ] as const)('when headers are %o, then %s', (headers, expected) => {
    expect(retryAfterSeconds(new Headers(headers), 1_000_000)).toBe(expected);
  });
});
