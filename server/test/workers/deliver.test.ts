// Delivery-time address checks (WH-HTTPS-PUBLIC) with a resolver the test controls.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliverOnce, type ResolvedAddress } from '../../src/workers/deliver.ts';
import { GENEROUS_PLAN, promptAvatar, startTestService } from '../support/harness.ts';
import { startReceiver, type TestReceiver } from '../support/receiver.ts';

let receiver: TestReceiver;
beforeAll(async () => {
  receiver = await startReceiver();
});
afterAll(() => receiver.close());

const resolverOf = (addresses: ResolvedAddress[], calls: string[] = []) => async (host: string) => {
  calls.push(host);
  return addresses;
};
const v4 = (address: string): ResolvedAddress => ({ address, family: 4 });
const v6 = (address: string): ResolvedAddress => ({ address, family: 6 });

describe('in production', () => {
  it.each([
    ['loopback', v4('127.0.0.1')],
    ['private 10/8', v4('10.1.2.3')],
    ['private 172.16/12', v4('172.20.0.1')],
    ['private 192.168/16', v4('192.168.0.10')],
    ['link-local metadata', v4('169.254.169.254')],
    ['CGNAT', v4('100.64.0.9')],
    ['this-network', v4('0.0.0.0')],
    ['multicast', v4('239.1.1.1')],
    ['IPv6 loopback', v6('::1')],
    ['unique-local', v6('fd00::5')],
    ['IPv6 link-local', v6('fe80::1')],
    ['IPv6 multicast', v6('ff02::1')],
    ['IPv4-mapped loopback', v6('::ffff:127.0.0.1')],
    ['IPv4-mapped metadata', v6('::ffff:a9fe:a9fe')],
    ['IPv4-compatible loopback', v6('::7f00:1')],
    ['6to4 of loopback', v6('2002:7f00:1::1')],
    ['Teredo', v6('2001:0:4136:e378:8000:63bf:80ff:fffe')],
    ['NAT64 of loopback', v6('64:ff9b::7f00:1')],
    ["Azure's wire server, a public address", v4('168.63.129.16')],
  ])('refuses a name that resolves to %s, without connecting', async (_case, address) => {
    const before = receiver.deliveries.length;

    const result = await deliverOnce('https://hooks.example.com/x', '{}', {}, { mode: 'production', timeoutMs: 500, resolve: resolverOf([address]) });

    expect(result).toMatchObject({ ok: false, error: 'refused_by_policy', detail: expect.stringMatching(/^refused: .*resolves to .*(is not public|is link-local or a metadata service)/), attempted: false });
    expect(receiver.deliveries.length).toBe(before);
  });

  it('refuses a name when any of its addresses is not public', async () => {
    const result = await deliverOnce('https://hooks.example.com/x', '{}', {}, { mode: 'production', timeoutMs: 500, resolve: resolverOf([v4('8.8.8.8'), v4('10.0.0.1')]) });

    expect(result).toMatchObject({ ok: false, error: 'refused_by_policy', detail: expect.stringContaining('10.0.0.1') });
  });

  it.each([['http://hooks.example.com/x', 'https'], ['https://127.0.0.1/x', 'not public'], ['https://localhost/x', 'not public']])('refuses %s', async (url, reason) => {
    const result = await deliverOnce(url, '{}', {}, { mode: 'production', timeoutMs: 500, resolve: resolverOf([v4('8.8.8.8')]) });

    expect(result).toMatchObject({ ok: false, error: 'refused_by_policy', detail: expect.stringContaining(reason) });
  });
});

describe('in the sandbox', () => {
  it.each([
    ['link-local metadata', v4('169.254.169.254')],
    ['link-local', v4('169.254.10.20')],
    ['IPv6 link-local', v6('fe80::1')],
    ['AWS IPv6 metadata', v6('fd00:ec2::254')],
    ['IPv4-mapped metadata', v6('::ffff:a9fe:a9fe')],
  ])('refuses a name that resolves to %s, without connecting, and says no more than its category to the account', async (_case, address) => {
    const before = receiver.deliveries.length;

    const result = await deliverOnce('http://hooks.example.com/x', '{}', {}, { mode: 'sandbox', timeoutMs: 500, resolve: resolverOf([v4('127.0.0.1'), address]) });

    expect(result).toMatchObject({ ok: false, error: 'refused_by_policy', attempted: false, detail: expect.stringContaining(address.address) });
    expect(receiver.deliveries.length).toBe(before);
  });

  it('resolves a name ending in several dots as the one name', async () => {
    const calls: string[] = [];
    const url = receiver.url.replace('127.0.0.1', 'receiver.test..');

    const result = await deliverOnce(`${url}/dots`, '{}', {}, { mode: 'sandbox', timeoutMs: 1000, resolve: resolverOf([v4('127.0.0.1')], calls) });

    expect(result).toEqual({ ok: true, status: 200 });
    expect(calls).toEqual(['receiver.test']);
  });
});

describe('the address that was checked', () => {
  it('is the one the connection uses: the name is resolved once, by our resolver', async () => {
    const calls: string[] = [];
    // receiver.test exists in no DNS: the delivery can only succeed by using this answer.
    const url = receiver.url.replace('127.0.0.1', 'receiver.test');

    const result = await deliverOnce(`${url}/checked`, '{"a":1}', { 'Content-Type': 'application/json' }, { mode: 'sandbox', timeoutMs: 1000, resolve: resolverOf([v4('127.0.0.1')], calls) });

    expect(result).toEqual({ ok: true, status: 200 });
    expect(calls).toEqual(['receiver.test']);
    expect(receiver.deliveries.at(-1)).toMatchObject({ path: '/checked', rawBody: '{"a":1}' });
  });
});

describe('a production server', () => {
  it('refuses http and non-public webhook URLs at request time with 422', async () => {
    const svc = await startTestService({ env: { SERVICE_MODE: 'production', PUBLIC_BASE_URL: 'https://avatars.example.com' } });
    try {
      const { api_key: key } = await svc.account({ plan: GENEROUS_PLAN });
      const cases: [string, string][] = [
        [`${receiver.url}/x`, 'https_required'],
        ['https://127.0.0.1/x', 'public_host_required'],
        ['https://169.254.169.254/latest', 'public_host_required'],
        ['https://[::ffff:10.0.0.1]/x', 'public_host_required'],
        ['https://localhost/x', 'public_host_required'],
      ];
      for (const [url, rule] of cases) {
        const r = await svc.request('POST', '/v1/avatars', { key, json: promptAvatar({ webhook_url: url }) });
        expect(r.status, url).toBe(422);
        expect(r.body.errors).toEqual([{ field: 'webhook_url', rule, message: expect.any(String) }]);
      }
    } finally {
      await svc.dispose();
    }
  });

  it('ends an event whose host resolves inside at its first attempt, never connecting and never retrying, logged refused_by_policy', async () => {
    // Six attempts on the schedule: the refusal, the same on every retry, must not use them.
    const svc = await startTestService({
      env: { SERVICE_MODE: 'production', PUBLIC_BASE_URL: 'https://avatars.example.com', WEBHOOK_MAX_ATTEMPTS: '6', WEBHOOK_BASE_DELAY_MS: '20', WEBHOOK_POLL_MS: '20' },
      resolve: resolverOf([v4('127.0.0.1')]),
    });
    try {
      const { api_key: key } = await svc.account({ plan: GENEROUS_PLAN });
      const before = receiver.deliveries.length;
      const id = (await svc.request('POST', '/v1/avatars', { key, json: promptAvatar({ webhook_url: 'https://rebind.example.com/hook' }) })).body.id;
      await svc.waitTerminal(`/v1/avatars/${id}`, key);
      const { eventIdFor } = await import('../../src/domain/ids.ts');
      const eventId = eventIdFor(id, 'avatar.ready');

      let event = await svc.request('GET', `/v1/webhook-events/${eventId}`, { key });
      for (let i = 0; i < 200 && event.body.status !== 'failed'; i++) {
        await new Promise((r) => setTimeout(r, 20));
        event = await svc.request('GET', `/v1/webhook-events/${eventId}`, { key });
      }

      expect(event.body).toMatchObject({ status: 'failed', next_attempt_at: null, attempts_total: 1 });
      expect(event.body.attempts).toEqual([expect.objectContaining({ number: 1, status_code: null, error_code: 'refused_by_policy', succeeded: false })]);
      expect(event.body.attempts[0].error).not.toMatch(/127\.0\.0\.1|rebind/);
      expect(receiver.deliveries.length).toBe(before);
    } finally {
      await svc.dispose();
    }
  });
});
