// The sandbox clock (ND-SANDBOX-CLOCK): an account moves its own time forward, and its
// daily windows, monthly credits, jobs and webhook retries follow; nobody else's do.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { issueKey } from '../../src/domain/accounts.ts';
import { fakeClock } from '../support/clock.ts';
import { promptAvatar, startTestService, type Reply, type TestService } from '../support/harness.ts';
import { startReceiver, type TestReceiver } from '../support/receiver.ts';

const DAY_MS = 86_400_000;

const advance = (svc: TestService, key: string, body: Record<string, unknown>) => svc.request('POST', '/v1/test_helpers/clock/advance', { key, json: body });
const accountTime = async (svc: TestService, key: string) => Date.parse((await svc.request('GET', '/v1/test_helpers/clock', { key })).body.now);
const limitHeaders = (r: Reply) => ({
  limit: r.headers.get('ratelimit-limit'),
  remaining: r.headers.get('ratelimit-remaining'),
  reset: r.headers.get('ratelimit-reset'),
  retryAfter: r.headers.get('retry-after'),
});

describe('the operation', () => {
  const clock = fakeClock(Date.UTC(2026, 10, 2, 9, 0, 0));
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService({ clock });
  });
  afterAll(() => svc.dispose());

  it('when a sandbox key reads and moves its clock, then the account time moves forward by seconds or to an instant', async () => {
    const { api_key: key } = await svc.account();

    const before = await svc.request('GET', '/v1/test_helpers/clock', { key });
    const bySeconds = await advance(svc, key, { seconds: 90 });
    const toInstant = await advance(svc, key, { to: '2026-11-03T00:00:00.000Z' });
    const sameAgain = await advance(svc, key, { to: '2026-11-02T12:00:00.000Z' });

    expect(before.body).toEqual({ object: 'sandbox_clock', now: '2026-11-02T09:00:00.000Z', offset_seconds: 0 });
    expect(bySeconds.body).toEqual({ object: 'sandbox_clock', now: '2026-11-02T09:01:30.000Z', offset_seconds: 90 });
    expect(toInstant.body).toEqual({ object: 'sandbox_clock', now: '2026-11-03T00:00:00.000Z', offset_seconds: 54_000 });
    expect(sameAgain.status).toBe(422);
    expect(sameAgain.body.errors).toEqual([expect.objectContaining({ field: 'to', rule: 'after_now' })]);
  });

  it('when the body asks for nothing, for both or for too much, then 422 names the field and the rule', async () => {
    const { api_key: key } = await svc.account();

    const neither = await advance(svc, key, {});
    const both = await advance(svc, key, { seconds: 5, to: '2027-01-01T00:00:00Z' });
    const tooFar = await advance(svc, key, { seconds: 366 * 86_400 + 1 });
    const back = await advance(svc, key, { seconds: -5 });
    const farInstant = await advance(svc, key, { to: '2030-01-01T00:00:00Z' });

    expect(neither.body.errors.map((e: any) => `${e.field}:${e.rule}`)).toEqual(['seconds:required', 'to:required']);
    expect(both.body.errors.map((e: any) => `${e.field}:${e.rule}`)).toEqual([':one_of']);
    expect(tooFar.body.errors.map((e: any) => `${e.field}:${e.rule}`)).toEqual(['seconds:maximum']);
    expect(back.body.errors.map((e: any) => `${e.field}:${e.rule}`)).toEqual(['seconds:minimum']);
    expect(farInstant.body.errors.map((e: any) => `${e.field}:${e.rule}`)).toEqual(['to:maximum']);
    expect((await accountTime(svc, key)) - clock.now()).toBe(0);
  });

  it('when a live key asks for the clock, then it gets what an unknown route gets and its time does not move', async () => {
    const { api_key: key } = await svc.account({ mode: 'live' });

    const read = await svc.request('GET', '/v1/test_helpers/clock', { key });
    const moved = await advance(svc, key, { seconds: 60 });
    const unknown = await svc.request('POST', '/v1/test_helpers/nothing', { key });
    const me = await svc.request('GET', '/v1/me', { key });

    for (const r of [read, moved]) {
      expect(r.status).toBe(404);
      expect(r.body).toMatchObject({ code: unknown.body.code, title: unknown.body.title, type: unknown.body.type });
      expect(r.body.detail).toBe(`No resource at ${r === read ? 'GET' : 'POST'} ${r.body.instance}.`);
      expect(r.headers.get('ratelimit-limit')).toBeNull();
    }
    expect(me.body.rate_limits.read.minute.remaining).toBe(119); // the refused clock calls counted nothing
    expect(me.body.credits.period_start).toBe('2026-11-01T00:00:00.000Z');
  });

  it('when the account has a live key, then a sandbox key cannot move it; when the clock moved, then no live key can be issued', async () => {
    const mixed = await svc.account();
    await issueKey(svc.store, clock, mixed.account_id, 'live');
    const moved = await svc.account();
    await advance(svc, moved.api_key, { seconds: 60 });

    const refused = await advance(svc, mixed.api_key, { seconds: 60 });

    expect(refused.status).toBe(409);
    expect(refused.body.code).toBe('sandbox_clock_unavailable');
    await expect(issueKey(svc.store, clock, moved.account_id, 'live')).rejects.toThrow(/cannot have a live key/);
    expect((await issueKey(svc.store, clock, moved.account_id, 'sandbox')).mode).toBe('sandbox');
  });
});

describe('the daily windows (RL-BUCKETS)', () => {
  const clock = fakeClock(Date.UTC(2026, 10, 2, 9, 0, 15));
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService({ clock });
  });
  afterAll(() => svc.dispose());

  it('when a key spent its 300 generation requests of the day, then 429 shows the day window until the next UTC day, and the next day admits it', async () => {
    const { api_key: key } = await svc.account();
    const other = await svc.account();
    const statuses: number[] = [];
    for (let minute = 0; minute < 30; minute++) {
      for (let i = 0; i < 10; i++) statuses.push((await svc.request('POST', '/v1/avatars', { key, json: { type: 'bad' } })).status);
      await advance(svc, key, { seconds: 60 });
    }

    const refused = await svc.request('POST', '/v1/avatars', { key, json: promptAvatar() });
    const now = await accountTime(svc, key);
    const untilTomorrow = Math.ceil((Math.floor(now / DAY_MS + 1) * DAY_MS - now) / 1000);
    await advance(svc, key, { to: new Date(Math.floor(now / DAY_MS + 1) * DAY_MS).toISOString() });
    const tomorrow = await svc.request('POST', '/v1/avatars', { key, json: promptAvatar() });
    const otherMe = await svc.request('GET', '/v1/me', { key: other.api_key });

    expect(statuses.every((s) => s === 422)).toBe(true);
    expect(refused.status).toBe(429);
    expect(limitHeaders(refused)).toEqual({ limit: '300', remaining: '0', reset: String(untilTomorrow), retryAfter: String(untilTomorrow) });
    expect(untilTomorrow).toBeGreaterThan(14 * 3600);
    expect(tomorrow.status).toBe(202);
    expect(tomorrow.body.created_at.slice(0, 10)).toBe('2026-11-03');
    expect(otherMe.body.rate_limits.generation.day.remaining).toBe(300);
    expect(otherMe.body.rate_limits.generation.minute.reset).toBe(45);
  });

  it('when a key spent its reads of the day, a minute window at a time, then the day window refuses it, whatever the minute', async () => {
    // A day of 200 reads in minutes of 40: the rule is the same at any size, and each
    // read is a real request checked against the contract, so the day is kept small.
    const { api_key: key } = await svc.account({ plan: { read: { minute: 40, day: 200 }, generation: { minute: 10, day: 300 } } });
    const spendMinute = async () => {
      let left = 40;
      await Promise.all(Array.from({ length: 8 }, async () => {
        while (left-- > 0) expect((await svc.request('GET', '/v1/me', { key })).status).toBe(200);
      }));
    };
    for (let minute = 0; minute < 5; minute++) {
      await spendMinute();
      await advance(svc, key, { seconds: 60 }); // the clock has its own bucket: a spent read window never blocks it
    }

    const refused = await svc.request('GET', '/v1/me', { key });

    expect(refused.status).toBe(429);
    expect(limitHeaders(refused).limit).toBe('200');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(3600);
  });
});

describe('the monthly credits (CR-MONTHLY-QUOTA)', () => {
  const clock = fakeClock(Date.UTC(2026, 10, 30, 23, 0, 0));
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService({ clock });
  });
  afterAll(() => svc.dispose());

  it('when an account used its month, then 402; when its clock enters the next month, then it has its whole quota again and nobody else moved', async () => {
    const { api_key: key } = await svc.account({ credits: 20 });
    const other = await svc.account({ credits: 20 });
    const accepted = [await svc.request('POST', '/v1/avatars', { key, json: promptAvatar() }), await svc.request('POST', '/v1/avatars', { key, json: promptAvatar() })];
    const broke = await svc.request('POST', '/v1/avatars', { key, json: promptAvatar() });

    await advance(svc, key, { to: '2026-12-01T00:00:00.000Z' });
    const me = await svc.request('GET', '/v1/me', { key });
    const nextMonth = await svc.request('POST', '/v1/avatars', { key, json: promptAvatar() });
    const otherMe = await svc.request('GET', '/v1/me', { key: other.api_key });

    expect(accepted.map((r) => r.status)).toEqual([202, 202]);
    expect(broke.status).toBe(402);
    expect(me.body.credits).toMatchObject({ period_start: '2026-12-01T00:00:00.000Z', quota: 20, used: 0, reserved: 0, available: 20 });
    expect(nextMonth.status).toBe(202);
    expect(otherMe.body.credits).toMatchObject({ period_start: '2026-11-01T00:00:00.000Z', available: 20 });
  });
});

describe('jobs and webhook retries on the account time', () => {
  const open: { close?: () => Promise<void>; dispose?: () => Promise<void> }[] = [];
  afterEach(async () => {
    for (const o of open.splice(0).reverse()) await (o.dispose?.() ?? o.close?.());
  });

  // The service's own time stands still, so only the account's clock moves anything.
  const clock = fakeClock(Date.UTC(2026, 10, 2, 9, 0, 0));

  async function setup(): Promise<{ svc: TestService; receiver: TestReceiver }> {
    const receiver = await startReceiver();
    // An hour per avatar and the contract's own retry schedule: only the clock can get through them in a test.
    const svc = await startTestService({ clock, env: { ENGINE_AVATAR_MS: '3600000', WEBHOOK_POLL_MS: '50' }, random: () => 0.5 });
    open.push(receiver, svc);
    return { svc, receiver };
  }

  it('when the clock moves past a job\'s work, then it ends at once, and another account\'s job does not', async () => {
    const { svc } = await setup();
    const mover = await svc.account();
    const still = await svc.account();
    const moving = (await svc.request('POST', '/v1/avatars', { key: mover.api_key, json: promptAvatar() })).body.id;
    const waiting = (await svc.request('POST', '/v1/avatars', { key: still.api_key, json: promptAvatar() })).body.id;

    await advance(svc, mover.api_key, { seconds: 3600 });
    const done = await svc.waitTerminal(`/v1/avatars/${moving}`, mover.api_key);
    const other = await svc.request('GET', `/v1/avatars/${waiting}`, { key: still.api_key });

    expect(done.status).toBe('ready');
    expect(Date.parse(done.completed_at) - Date.parse(done.created_at)).toBeGreaterThanOrEqual(3_600_000);
    expect(other.body.status).not.toMatch(/ready|failed/);
  });

  it('when a receiver keeps failing, then each retry comes when the account time reaches it: 5, 20, 80, 320 and 1,280 s, then no more', async () => {
    const { svc, receiver } = await setup();
    receiver.script = () => ({ status: 500 });
    const { api_key: key } = await svc.account();
    const id = (await svc.request('POST', '/v1/avatars', { key, json: promptAvatar({ webhook_url: `${receiver.url}/hook` }) })).body.id;
    await advance(svc, key, { seconds: 3600 });
    await receiver.waitFor(1);
    const eventId = receiver.deliveries[0]!.body.id;
    // The receiver has an attempt before the service has recorded how it ended.
    const recorded = async (attempts: number) => {
      for (;;) {
        const event = (await svc.store.outbox.getEvent(eventId))!;
        if (event.attempts >= attempts) return event;
        await new Promise((r) => setTimeout(r, 5));
      }
    };
    await recorded(1);

    const dueIn: number[] = [];
    for (const [n, gap] of [5, 20, 80, 320, 1280].entries()) {
      await advance(svc, key, { seconds: gap - 1 });
      dueIn.push((await svc.store.outbox.getEvent(eventId))!.nextAttemptAt - clock.now());
      await advance(svc, key, { seconds: 1 });
      await receiver.waitFor(n + 2);
      await recorded(n + 2);
    }
    const event = await svc.store.outbox.getEvent(eventId);

    expect(dueIn).toEqual([1000, 1000, 1000, 1000, 1000]);
    expect(receiver.deliveries).toHaveLength(6);
    expect(new Set(receiver.deliveries.map((d) => d.body.id))).toEqual(new Set([receiver.deliveries[0]!.body.id]));
    expect(receiver.deliveries[0]!.body.data.object.id).toBe(id);
    expect(event).toMatchObject({ status: 'failed', attempts: 6 });
    // Signatures keep the service's time, not the account's, so receivers verify them as always.
    for (const d of receiver.deliveries) expect(Number(d.headers['x-service-timestamp'])).toBe(Math.floor(clock.now() / 1000));
  });
});

describe('the cap on the account time (ND-SANDBOX-CLOCK)', () => {
  const clock = fakeClock(Date.UTC(2026, 10, 2, 9, 0, 0));
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService({ clock });
  });
  afterAll(() => svc.dispose());

  const YEAR_AND_DAY = 366 * 86_400;
  const CAP_SECONDS = 3_155_760_000;
  const errorsOf = (r: Reply) => r.body.errors.map((e: any) => `${e.field}:${e.rule}`);

  /** Moves the account's clock to `offsetSeconds` ahead of the service's, a year and a day at a time. */
  async function moveTo(key: string, offsetSeconds: number): Promise<void> {
    for (let left = offsetSeconds; left > 0; left -= YEAR_AND_DAY) {
      expect((await advance(svc, key, { seconds: Math.min(left, YEAR_AND_DAY) })).status).toBe(200);
    }
  }

  it('when moves reach 100 years ahead, then the next is refused naming its field and offset_limit, and the account answers as the contract says', async () => {
    const { api_key: key } = await svc.account({ credits: 10 });
    await svc.request('POST', '/v1/avatars', { key, json: promptAvatar() }); // spends the month's 10 credits

    await moveTo(key, CAP_SECONDS);
    const bySeconds = await advance(svc, key, { seconds: 1 });
    const toInstant = await advance(svc, key, { to: new Date(clock.now() + CAP_SECONDS * 1000 + 1000).toISOString() });
    const read = await svc.request('GET', '/v1/test_helpers/clock', { key });
    const me = await svc.request('GET', '/v1/me', { key });
    const created = await svc.request('POST', '/v1/avatars', { key, json: promptAvatar() });
    const refused = await svc.request('POST', '/v1/avatars', { key, json: promptAvatar() });
    const list = await svc.request('GET', '/v1/avatars', { key });

    expect(bySeconds.status).toBe(422);
    expect(errorsOf(bySeconds)).toEqual(['seconds:offset_limit']);
    expect(bySeconds.body.errors[0].message).toContain(String(CAP_SECONDS));
    expect(toInstant.status).toBe(422);
    expect(errorsOf(toInstant)).toEqual(['to:offset_limit']);
    expect(read.body).toEqual({ object: 'sandbox_clock', now: '2126-11-03T09:00:00.000Z', offset_seconds: CAP_SECONDS });
    expect(me.status).toBe(200);
    expect(me.body.credits).toMatchObject({ period_start: '2126-11-01T00:00:00.000Z', period_end: '2126-12-01T00:00:00.000Z', available: 10 });
    expect(created.status).toBe(202);
    expect(created.body.created_at).toBe('2126-11-03T09:00:00.000Z');
    expect(refused.status).toBe(402);
    expect(refused.body.code).toBe('insufficient_credits');
    expect(list.body.data.map((a: any) => a.created_at.slice(0, 4))).toEqual(['2126', '2026']);
  });

  it('when two moves race near the cap, then one moves the clock and the other is refused: together they never pass it', async () => {
    const { api_key: key } = await svc.account();
    await moveTo(key, CAP_SECONDS - 86_400);

    const raced = await Promise.all([advance(svc, key, { seconds: 86_400 }), advance(svc, key, { seconds: 86_400 })]);

    expect(raced.map((r) => r.status).sort()).toEqual([200, 422]);
    expect((await svc.request('GET', '/v1/test_helpers/clock', { key })).body.offset_seconds).toBe(CAP_SECONDS);
  });

  it('when `to` names a leap second, then 422 names `to` and leap_second and the clock stays; other RFC 3339 forms move it', async () => {
    const { api_key: key } = await svc.account();

    const leaps = [
      await advance(svc, key, { to: '2026-12-31T23:59:60Z' }),
      await advance(svc, key, { to: '2026-12-31T23:59:60.5Z' }),
      await advance(svc, key, { to: '2026-12-31T22:59:60-01:00' }),
    ];
    const lower = await advance(svc, key, { to: '2026-11-02t10:00:00z' });
    const offset = await advance(svc, key, { to: '2026-11-02T12:00:00+01:00' });

    for (const r of leaps) {
      expect(r.status).toBe(422);
      expect(errorsOf(r)).toEqual(['to:leap_second']);
    }
    expect(lower.body.now).toBe('2026-11-02T10:00:00.000Z');
    expect(offset.body.now).toBe('2026-11-02T11:00:00.000Z');
  });
});
