// Rate limits (RL-*), with a fake clock for the minute and day windows.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueKey } from '../../src/domain/accounts.ts';
import { fakeClock } from '../support/clock.ts';
import { promptAvatar, startTestService, type Reply, type TestService } from '../support/harness.ts';

const clock = fakeClock(Date.UTC(2026, 10, 2, 9, 0, 15)); // 45 s before the minute ends
let svc: TestService;

beforeAll(async () => {
  svc = await startTestService({ clock });
});
afterAll(() => svc.dispose());

const limitHeaders = (r: Reply) =>
  Object.fromEntries(['limit', 'remaining', 'reset'].map((h) => [h, [r.headers.get(`ratelimit-${h}`), r.headers.get(`x-ratelimit-${h}`)]]));

describe('the read bucket (RL-BUCKETS)', () => {
  it('admits 120 a minute with headers of the active window, then refuses with 429 and Retry-After', async () => {
    clock.set(Date.UTC(2026, 10, 2, 9, 0, 15));
    const { api_key: key } = await svc.account();

    const ok: Reply[] = [];
    for (let i = 0; i < 120; i++) ok.push(await svc.request('GET', '/v1/me', { key }));
    const refused = await svc.request('GET', '/v1/me', { key });

    expect(ok.every((r) => r.status === 200)).toBe(true);
    expect(limitHeaders(ok[0]!)).toEqual({ limit: ['120', '120'], remaining: ['119', '119'], reset: ['45', '45'] });
    expect(limitHeaders(ok[119]!).remaining).toEqual(['0', '0']);
    expect(ok.every((r) => r.headers.get('retry-after') === null)).toBe(true); // RL-RETRY-AFTER-ONLY-429
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ code: 'rate_limit_exceeded', retry_after: 45 });
    expect(refused.headers.get('retry-after')).toBe('45');
    expect(limitHeaders(refused)).toEqual({ limit: ['120', '120'], remaining: ['0', '0'], reset: ['45', '45'] });
  });

  it('admits again once the minute turns', async () => {
    clock.set(Date.UTC(2026, 10, 2, 10, 0, 0));
    const { api_key: key } = await svc.account({ plan: { read: { minute: 2, day: 100 }, generation: { minute: 10, day: 300 } } });
    await svc.request('GET', '/v1/me', { key });
    await svc.request('GET', '/v1/me', { key });
    expect((await svc.request('GET', '/v1/me', { key })).status).toBe(429);

    clock.advance(60_000);

    expect((await svc.request('GET', '/v1/me', { key })).status).toBe(200);
  });
});

describe('the generation bucket', () => {
  it('admits 10 a minute whatever the answers, apart from the read bucket', async () => {
    clock.set(Date.UTC(2026, 10, 2, 11, 0, 30));
    const { api_key: key } = await svc.account();

    const statuses: number[] = [];
    for (let i = 0; i < 10; i++) statuses.push((await svc.request('POST', '/v1/avatars', { key, json: i % 2 ? promptAvatar() : { type: 'bad' } })).status);
    const refused = await svc.request('POST', '/v1/avatars', { key, json: promptAvatar() });
    const read = await svc.request('GET', '/v1/me', { key });

    expect(statuses.filter((s) => s === 202)).toHaveLength(5);
    expect(statuses.filter((s) => s === 422)).toHaveLength(5);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('30');
    expect(read.status).toBe(200);
    expect(read.body.rate_limits.generation.minute).toEqual({ limit: 10, remaining: 0, reset: 30 });
  });

  it('answers 429 before looking at the body', async () => {
    clock.set(Date.UTC(2026, 10, 2, 12, 0, 0));
    const { api_key: key } = await svc.account({ plan: { read: { minute: 120, day: 10_000 }, generation: { minute: 1, day: 300 } } });
    await svc.request('POST', '/v1/avatars', { key, json: promptAvatar() });

    const r = await svc.request('POST', '/v1/avatars', { key, body: 'not json', headers: { 'Content-Type': 'text/plain' } });

    expect(r.status).toBe(429);
  });
});

describe('the day window', () => {
  it('refuses once the day is used up, with Retry-After until UTC midnight, whatever the minute says', async () => {
    clock.set(Date.UTC(2026, 10, 3, 23, 50, 0));
    const { api_key: key } = await svc.account({ plan: { read: { minute: 120, day: 10_000 }, generation: { minute: 10, day: 25 } } });
    for (let minute = 0; minute < 3; minute++) {
      for (let i = 0; i < 10 && minute * 10 + i < 25; i++) {
        expect((await svc.request('POST', '/v1/avatars', { key, json: { type: 'bad' } })).status).toBe(422);
      }
      clock.advance(60_000);
    }

    const refused = await svc.request('POST', '/v1/avatars', { key, json: promptAvatar() });

    expect(refused.status).toBe(429);
    expect(limitHeaders(refused)).toEqual({ limit: ['25', '25'], remaining: ['0', '0'], reset: ['420', '420'] });
    expect(refused.headers.get('retry-after')).toBe('420');
  });

  it('shows the day window in the headers once it is closer to exhaustion than the minute', async () => {
    clock.set(Date.UTC(2026, 10, 4, 8, 0, 0));
    const { api_key: key } = await svc.account({ plan: { read: { minute: 120, day: 3 }, generation: { minute: 10, day: 300 } } });

    const first = await svc.request('GET', '/v1/me', { key });

    expect(limitHeaders(first)).toEqual({ limit: ['3', '3'], remaining: ['2', '2'], reset: ['57600', '57600'] });
  });

  it('is not used up by requests the minute window refused', async () => {
    clock.set(Date.UTC(2026, 10, 5, 8, 0, 0));
    const { api_key: key } = await svc.account({ plan: { read: { minute: 1000, day: 10_000 }, generation: { minute: 2, day: 50 } } });
    for (let i = 0; i < 5; i++) await svc.request('POST', '/v1/avatars', { key, json: { type: 'bad' } });

    const me = await svc.request('GET', '/v1/me', { key });

    expect(me.body.rate_limits.generation.day).toMatchObject({ limit: 50, remaining: 48 });
  });
});

describe('per key (RL-PER-KEY)', () => {
  it('counts each key of an account on its own', async () => {
    clock.set(Date.UTC(2026, 10, 6, 8, 0, 0));
    const first = await svc.account({ plan: { read: { minute: 1, day: 100 }, generation: { minute: 10, day: 300 } } });
    const second = await issueKey(svc.store, clock, first.account_id, 'sandbox');
    await svc.request('GET', '/v1/me', { key: first.api_key });

    const refused = await svc.request('GET', '/v1/me', { key: first.api_key });
    const other = await svc.request('GET', '/v1/me', { key: second.api_key });

    expect(refused.status).toBe(429);
    expect(other.status).toBe(200);
  });
});

describe('counters', () => {
  it('survive a restart of the service', async () => {
    const at = Date.UTC(2026, 10, 7, 8, 0, 0);
    const restartClock = fakeClock(at);
    const first = await startTestService({ clock: restartClock });
    const { api_key: key } = await first.account({ plan: { read: { minute: 3, day: 100 }, generation: { minute: 10, day: 300 } } });
    await first.request('GET', '/v1/me', { key });
    await first.request('GET', '/v1/me', { key });
    await first.stop();

    const again = await startTestService({ clock: restartClock, storeEnv: first.storeEnv });
    try {
      const r = await again.request('GET', '/v1/me', { key });
      expect({ status: r.status, remaining: limitHeaders(r).remaining }, JSON.stringify(r.body)).toEqual({ status: 200, remaining: ['0', '0'] });
    } finally {
      await again.dispose();
      await first.dispose();
    }
  });
});

describe('the structured fields of the IETF draft (ND-RATELIMIT-FIELDS)', () => {
  const structured = (r: Reply) => ({ policy: r.headers.get('ratelimit-policy'), state: r.headers.get('ratelimit') });

  it('lists both windows of the bucket in RateLimit-Policy and the active one in RateLimit, with the figures of the trio', async () => {
    clock.set(Date.UTC(2026, 10, 3, 9, 0, 15));
    const { api_key: key } = await svc.account({ plan: { read: { minute: 2, day: 100 }, generation: { minute: 10, day: 300 } } });

    const first = await svc.request('GET', '/v1/me', { key });
    const second = await svc.request('GET', '/v1/me', { key });
    const refused = await svc.request('GET', '/v1/me', { key });
    const create = await svc.request('POST', '/v1/avatars', { key, json: promptAvatar() });

    expect(structured(first)).toEqual({ policy: '"minute";q=2;w=60, "day";q=100;w=86400', state: '"minute";r=1;t=45' });
    expect(limitHeaders(first)).toEqual({ limit: ['2', '2'], remaining: ['1', '1'], reset: ['45', '45'] });
    expect(structured(second).state).toBe('"minute";r=0;t=45');
    expect(refused.status).toBe(429);
    expect(structured(refused)).toEqual({ policy: '"minute";q=2;w=60, "day";q=100;w=86400', state: '"minute";r=0;t=45' });
    expect(create.status).toBe(202);
    expect(structured(create)).toEqual({ policy: '"minute";q=10;w=60, "day";q=300;w=86400', state: '"minute";r=9;t=45' });
  });

  it('names the day in RateLimit when the day is the window closer to exhaustion', async () => {
    clock.set(Date.UTC(2026, 10, 3, 23, 59, 0));
    const { api_key: key } = await svc.account({ plan: { read: { minute: 10, day: 2 }, generation: { minute: 10, day: 300 } } });

    const first = await svc.request('GET', '/v1/me', { key });

    expect(structured(first).state).toBe('"day";r=1;t=60');
    expect(limitHeaders(first)).toEqual({ limit: ['2', '2'], remaining: ['1', '1'], reset: ['60', '60'] });
  });

  it('are not sent where the trio is not: an unknown key gets neither', async () => {
    const r = await svc.request('GET', '/v1/me', { key: 'sk_test_unknownunknownunknown' });

    expect(r.status).toBe(401);
    expect(structured(r)).toEqual({ policy: null, state: null });
    expect(r.headers.get('ratelimit-limit')).toBeNull();
  });
});
