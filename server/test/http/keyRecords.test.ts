// The key records a server keeps between requests (domain/keyCache.ts): a key seen
// before goes to the store only to be counted, and a change made anywhere else (the
// admin command, another API process: here, a second connection to the same store)
// holds on the very next request.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import type { Store } from '../../src/domain/ports.ts';
import { openStore } from '../../src/runtime.ts';
import { fakeClock } from '../support/clock.ts';
import { startTestService, type TestService } from '../support/harness.ts';

let svc: TestService;
/** Another connection to the service's store, as the admin command or another process has. */
let elsewhere: Store;

beforeAll(async () => {
  // A clock that stands still, so the requests a test compares share one minute window.
  svc = await startTestService({ clock: fakeClock(Date.UTC(2026, 10, 2, 9, 0, 30)) });
  elsewhere = await openStore(loadConfig(svc.storeEnv.env), { serving: false });
});

afterAll(async () => {
  await elsewhere?.close();
  await svc?.dispose();
});

describe('key records kept between requests', () => {
  it('read a known key from the store once, not on every request', async () => {
    const { api_key: key } = await svc.account();
    const reads = vi.spyOn(svc.store.accounts, 'findKeyByHash');

    const statuses = [];
    for (let i = 0; i < 5; i++) statuses.push((await svc.request('GET', '/v1/me', { key })).status);

    expect(statuses).toEqual([200, 200, 200, 200, 200]);
    expect(reads).toHaveBeenCalledTimes(1);
    reads.mockRestore();
  });

  it('refuse a key revoked elsewhere on its very next request', async () => {
    const { api_key: key, key_id: keyId } = await svc.account();
    expect((await svc.request('GET', '/v1/me', { key })).status).toBe(200);

    await elsewhere.accounts.revokeKey(keyId, Date.now());
    const next = await svc.request('GET', '/v1/me', { key });

    expect(next.status).toBe(401);
  });

  it('count a plan changed elsewhere from the very next request', async () => {
    const { api_key: key, account_id: accountId } = await svc.account();
    expect((await svc.request('GET', '/v1/me', { key })).headers.get('ratelimit-limit')).toBe('120');

    await elsewhere.accounts.setPlan(accountId, { read: { minute: 7, day: 70 }, generation: { minute: 3, day: 30 } });
    const next = await svc.request('GET', '/v1/me', { key });

    expect(next.headers.get('ratelimit-limit')).toBe('7');
    expect(next.headers.get('ratelimit-remaining')).toBe('5'); // the window holds both requests
  });

  it('count nothing for a request whose kept record was stale', async () => {
    const { api_key: key, account_id: accountId } = await svc.account();
    expect((await svc.request('GET', '/v1/me', { key })).headers.get('ratelimit-remaining')).toBe('119');

    await elsewhere.accounts.setSigningSecret(accountId, 'whsec_changedElsewhere000000000000000000');
    const next = await svc.request('GET', '/v1/me', { key });

    expect(next.headers.get('ratelimit-remaining')).toBe('118');
  });

  it('cost the store no read for a key refused until its window reopens', async () => {
    const { api_key: key } = await svc.account({ plan: { read: { minute: 2, day: 100 }, generation: { minute: 1, day: 10 } } });
    const avatar = '/v1/avatars/av_0123456789abcdefghijklmn';
    const before = [(await svc.request('GET', avatar, { key })).status, (await svc.request('GET', avatar, { key })).status, (await svc.request('GET', avatar, { key })).status];
    const reads = vi.spyOn(svc.store.jobs, 'getJob');

    const refused = await svc.request('GET', avatar, { key });

    expect(before).toEqual([404, 404, 429]);
    expect(refused.status).toBe(429);
    expect(reads).not.toHaveBeenCalled();
    reads.mockRestore();
  });

  it('refuse a revoked live key on the sandbox clock with 401, not the unknown route', async () => {
    const { api_key: key, key_id: keyId } = await svc.account({ mode: 'live' });
    expect((await svc.request('GET', '/v1/test_helpers/clock', { key })).status).toBe(404);

    await elsewhere.accounts.revokeKey(keyId, Date.now());
    const next = await svc.request('GET', '/v1/test_helpers/clock', { key });

    expect(next.status).toBe(401);
  });
});
