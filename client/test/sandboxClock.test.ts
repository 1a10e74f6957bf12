// The client's sandbox clock helpers against a real local server: what an integrator
// writes to test daily-limit and month-rollover handling in seconds.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, promptAvatar, type TestService } from '../../server/test/support/harness.ts';
import { createAvatarClient, nextBoundary } from '../src/index.ts';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(() => svc.dispose());

describe('nextBoundary', () => {
  it('when given an instant, then it names the first instant of the next UTC minute, day and month', () => {
    const now = Date.UTC(2026, 11, 31, 23, 59, 30, 500);

    expect(new Date(nextBoundary(now, 'minute')).toISOString()).toBe('2027-01-01T00:00:00.000Z');
    expect(new Date(nextBoundary(Date.UTC(2026, 1, 3, 4, 5, 6), 'minute')).toISOString()).toBe('2026-02-03T04:06:00.000Z');
    expect(new Date(nextBoundary(Date.UTC(2026, 1, 3, 4, 5, 6), 'day')).toISOString()).toBe('2026-02-04T00:00:00.000Z');
    expect(new Date(nextBoundary(Date.UTC(2026, 1, 28, 4), 'month')).toISOString()).toBe('2026-03-01T00:00:00.000Z');
    expect(new Date(nextBoundary(Date.UTC(2026, 1, 1), 'month')).toISOString()).toBe('2026-03-01T00:00:00.000Z');
  });
});

describe('advanceSandboxClockPast', () => {
  it('when the day\'s generation requests are spent, then moving past the day admits the key again', async () => {
    const { api_key: apiKey } = await svc.account({ plan: { read: { minute: 120, day: 10_000 }, generation: { minute: 2, day: 3 } } });
    const api = createAvatarClient({ baseUrl: svc.url, apiKey, retry: false });
    const first = [await api.createAvatar(promptAvatar() as any), await api.createAvatar(promptAvatar() as any)];
    await api.advanceSandboxClockPast('minute');
    const third = await api.createAvatar(promptAvatar() as any);
    const refused = await api.createAvatar(promptAvatar() as any);

    const clock = await api.advanceSandboxClockPast('day');
    const nextDay = await api.createAvatar(promptAvatar() as any);

    expect([...first, third].map((r) => r.response.status)).toEqual([202, 202, 202]);
    expect(refused.response.status).toBe(429);
    expect(refused.response.headers.get('ratelimit-limit')).toBe('3');
    expect(clock.now.slice(11)).toMatch(/^00:00:0/);
    expect(nextDay.response.status).toBe(202);
  });

  it('when the month\'s credits are spent, then moving past the month gives the whole quota back', async () => {
    const { api_key: apiKey } = await svc.account({ credits: 10 });
    const api = createAvatarClient({ baseUrl: svc.url, apiKey, retry: false });
    const spent = await api.createAvatar(promptAvatar() as any);
    const broke = await api.createAvatar(promptAvatar() as any);

    const clock = await api.advanceSandboxClockPast('month');
    const me = await api.getMe();
    const again = await api.createAvatar(promptAvatar() as any);

    expect(spent.response.status).toBe(202);
    expect(broke.error?.code).toBe('insufficient_credits');
    expect(me.data?.credits.available).toBe(10);
    expect(me.data?.credits.period_start).toBe(`${clock.now.slice(0, 8)}01T00:00:00.000Z`);
    expect(again.response.status).toBe(202);
  });

  it('when the key is live, then the helper throws with the 404 of an unknown route', async () => {
    const { api_key: apiKey } = await svc.account({ mode: 'live' });
    const api = createAvatarClient({ baseUrl: svc.url, apiKey, retry: false });

    await expect(api.advanceSandboxClockPast('day')).rejects.toMatchObject({ name: 'ApiError', status: 404 });
  });
});
