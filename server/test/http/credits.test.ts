// Credits (CR-*): reserved when a job is accepted, charged when it is ready, released
// when it fails; a 402 starts and charges nothing; reads are free; under concurrency
// nothing is spent twice.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { periodOf } from '../../src/domain/credits.ts';
import { fakeClock } from '../support/clock.ts';
import { GENEROUS_PLAN, promptAvatar, startTestService, type TestService } from '../support/harness.ts';

let svc: TestService;

beforeAll(async () => {
  // Long enough for a read between acceptance and completion to see the reservation.
  svc = await startTestService({ env: { ENGINE_AVATAR_MS: '400', ENGINE_VIDEO_MS: '40' } });
});
afterAll(() => svc.dispose());

const credits = async (key: string) => (await svc.request('GET', '/v1/me', { key })).body.credits;

describe('a job that is accepted', () => {
  it('reserves its cost at once and charges it when ready (CR-RESERVE)', async () => {
    const key = (await svc.account({ credits: 100, plan: GENEROUS_PLAN })).api_key;

    const created = await svc.request('POST', '/v1/avatars', { key, json: promptAvatar() });
    const held = await credits(key);
    await svc.waitTerminal(`/v1/avatars/${created.body.id}`, key);
    const charged = await credits(key);

    expect(held).toMatchObject({ quota: 100, reserved: 10, used: 0, available: 90 });
    expect(charged).toMatchObject({ quota: 100, reserved: 0, used: 10, available: 90 });
  });

  it('gives its credits back when it fails', async () => {
    const key = (await svc.account({ credits: 100, plan: GENEROUS_PLAN })).api_key;

    const created = await svc.request('POST', '/v1/avatars', { key, json: promptAvatar({ name: 'x [sandbox:fail]' }) });
    await svc.waitTerminal(`/v1/avatars/${created.body.id}`, key);

    expect(await credits(key)).toMatchObject({ reserved: 0, used: 0, available: 100 });
  });

  it("is charged to the key's account, whichever of its keys made it (CR-ACCOUNT, AUTH-ACCOUNT)", async () => {
    const account = await svc.account({ credits: 100, plan: GENEROUS_PLAN });
    const { issueKey } = await import('../../src/domain/accounts.ts');
    const second = await issueKey(svc.store, svc.domain.clock, account.account_id, 'sandbox');

    const created = await svc.request('POST', '/v1/avatars', { key: second.api_key, json: promptAvatar() });
    await svc.waitTerminal(`/v1/avatars/${created.body.id}`, second.api_key);

    const me = (await svc.request('GET', '/v1/me', { key: account.api_key })).body;
    expect(me.account_id).toBe(account.account_id);
    expect(me.credits.used).toBe(10);
    expect((await svc.request('GET', `/v1/avatars/${created.body.id}`, { key: account.api_key })).status).toBe(200);
  });
});

describe('a job the account cannot pay for (CR-402, CR-402-NO-JOB)', () => {
  it('answers 402 insufficient_credits, starts nothing and charges nothing', async () => {
    const key = (await svc.account({ credits: 15, plan: GENEROUS_PLAN })).api_key;
    const first = await svc.request('POST', '/v1/avatars', { key, json: promptAvatar() });
    await svc.waitTerminal(`/v1/avatars/${first.body.id}`, key);
    const before = await credits(key);
    const activeBefore = await svc.activeJobs();

    const r = await svc.request('POST', '/v1/avatars', { key, json: promptAvatar() });

    expect(r.status).toBe(402);
    expect(r.body).toMatchObject({ code: 'insufficient_credits', credits_required: 10, credits_available: 5 });
    expect(r.headers.get('location')).toBeNull();
    expect(await credits(key)).toEqual(before);
    expect(await svc.activeJobs()).toBe(activeBefore);
  });

  it('answers 402 for a video as well', async () => {
    const key = (await svc.account({ credits: 25, plan: GENEROUS_PLAN })).api_key;
    const avatar = await svc.request('POST', '/v1/avatars', { key, json: promptAvatar() });
    await svc.waitTerminal(`/v1/avatars/${avatar.body.id}`, key);

    const r = await svc.request('POST', '/v1/avatar-videos', { key, json: { avatar_id: avatar.body.id, script: 'Hi' } });

    expect(r.status).toBe(402);
    expect(r.body.credits_required).toBe(20);
    expect(await credits(key)).toMatchObject({ used: 10, reserved: 0, available: 15 });
  });

  it('checks the rate limit first and the credits last (RL-BOTH-CHECKS)', async () => {
    const key = (await svc.account({ credits: 0, plan: { ...GENEROUS_PLAN, generation: { minute: 1, day: 100 } } })).api_key;

    const invalid = await svc.request('POST', '/v1/avatars', { key, json: { type: 'prompt' } });
    const limited = await svc.request('POST', '/v1/avatars', { key, json: promptAvatar() });

    expect(invalid.status).toBe(422); // validation before credits: an empty account still learns what is wrong
    expect(limited.status).toBe(429); // the limit before everything but authentication
  });
});

describe('reads (CR-READ-FREE)', () => {
  it('never charge credits', async () => {
    const key = (await svc.account({ credits: 50, plan: GENEROUS_PLAN })).api_key;
    const created = await svc.request('POST', '/v1/avatars', { key, json: promptAvatar() });
    await svc.waitTerminal(`/v1/avatars/${created.body.id}`, key);
    const before = await credits(key);

    for (let i = 0; i < 25; i++) {
      await svc.request('GET', `/v1/avatars/${created.body.id}`, { key });
      await svc.request('GET', '/v1/me', { key });
    }

    expect(await credits(key)).toEqual(before);
  });
});

describe('concurrent requests', () => {
  it('accept exactly as many jobs as the credits pay for, and spend nothing twice', async () => {
    const K = 7;
    const N = 40;
    const account = await svc.account({ credits: K * 10, plan: GENEROUS_PLAN });

    const replies = await Promise.all(Array.from({ length: N }, () => svc.request('POST', '/v1/avatars', { key: account.api_key, json: promptAvatar() })));

    const accepted = replies.filter((r) => r.status === 202);
    expect(accepted).toHaveLength(K);
    expect(replies.filter((r) => r.status === 402)).toHaveLength(N - K);
    await Promise.all(accepted.map((r) => svc.waitTerminal(`/v1/avatars/${r.body.id}`, account.api_key)));
    expect(await credits(account.api_key)).toMatchObject({ used: K * 10, reserved: 0, available: 0 });
  });
});

describe('the monthly period', () => {
  it('renews the quota on the first instant of the next UTC month', async () => {
    const clock = fakeClock(Date.UTC(2026, 10, 30, 23, 59, 0));
    const monthly = await startTestService({ clock });
    try {
      const key = (await monthly.account({ credits: 10 })).api_key;
      const created = await monthly.request('POST', '/v1/avatars', { key, json: promptAvatar() });
      await monthly.waitTerminal(`/v1/avatars/${created.body.id}`, key);
      const november = (await monthly.request('POST', '/v1/avatars', { key, json: promptAvatar() })).status;

      clock.set(Date.UTC(2026, 11, 1, 0, 0, 0));
      const me = (await monthly.request('GET', '/v1/me', { key })).body.credits;

      expect(november).toBe(402);
      expect(me).toMatchObject({ period_start: '2026-12-01T00:00:00.000Z', period_end: '2027-01-01T00:00:00.000Z', used: 0, available: 10 });
      expect((await monthly.request('POST', '/v1/avatars', { key, json: promptAvatar() })).status).toBe(202);
    } finally {
      await monthly.dispose();
    }
  });

  it('adds an operator grant to the current period only', async () => {
    const account = await svc.account({ credits: 0, plan: GENEROUS_PLAN });
    await svc.store.accounts.grantCredits(account.account_id, periodOf(Date.now()), 30);

    const r = await svc.request('POST', '/v1/avatars', { key: account.api_key, json: promptAvatar() });

    expect(r.status).toBe(202);
    expect((await credits(account.api_key)).quota).toBe(30);
  });
});
