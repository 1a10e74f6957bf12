// Webhook delivery (WH-*, CR-WEBHOOK-INDEPENDENT) to a real local receiver.
import { afterEach, describe, expect, it } from 'vitest';
import { verifyWebhook } from '../../../client/src/verify.ts';
import { eventIdFor } from '../../src/domain/ids.ts';
import { GENEROUS_PLAN, promptAvatar, startTestService, type TestService } from '../support/harness.ts';
import { startReceiver, withoutLinkQueries, type TestReceiver } from '../support/receiver.ts';
import { eventually } from '../support/eventually.ts';

/** A record with its file links' query (their expiry and signature, renewed by each read: ND-FILE-LINKS) left out. */
function linksUnsigned(record: Record<string, unknown>): Record<string, unknown> {
  const out = { ...record };
  for (const member of ['preview_image_url', 'video_url', 'captions_url']) if (typeof out[member] === 'string') out[member] = (out[member] as string).split('?')[0];
  return out;
}

const FAST = { WEBHOOK_BASE_DELAY_MS: '60', WEBHOOK_POLL_MS: '20', WEBHOOK_TIMEOUT_MS: '400', WEBHOOK_MAX_ATTEMPTS: '3' };
const open: { close?: () => Promise<void>; dispose?: () => Promise<void> }[] = [];

afterEach(async () => {
  for (const o of open.splice(0).reverse()) await (o.dispose?.() ?? o.close?.());
});

async function setup(env: Record<string, string> = {}) {
  const receiver = await startReceiver();
  const svc = await startTestService({ env: { ...FAST, ...env }, random: () => 0.5 });
  open.push(receiver, svc);
  const account = await svc.account({ plan: GENEROUS_PLAN, credits: 10_000 });
  return { receiver, svc, account, key: account.api_key };
}

async function createAvatar(svc: TestService, key: string, webhookUrl: string, extra: Record<string, unknown> = {}) {
  const r = await svc.request('POST', '/v1/avatars', { key, json: promptAvatar({ webhook_url: webhookUrl, ...extra }) });
  expect(r.status).toBe(202);
  return r.body.id as string;
}

describe('each terminal event (WH-TERMINAL, WH-PAYLOAD-SHAPE, WH-SIGNATURE)', () => {
  it('sends avatar.ready, avatar.failed, avatar_video.ready and avatar_video.failed, signed, with the GET body at data.object', async () => {
    const { receiver, svc, key, account } = await setup();
    const ready = await createAvatar(svc, key, `${receiver.url}/a`);
    const failed = await createAvatar(svc, key, `${receiver.url}/b`, { name: 'x [sandbox:fail]' });
    await svc.waitTerminal(`/v1/avatars/${ready}`, key);
    const video = (await svc.request('POST', '/v1/avatar-videos', { key, json: { avatar_id: ready, script: 'Hello', webhook_url: `${receiver.url}/c` } })).body.id;
    const videoFailed = (await svc.request('POST', '/v1/avatar-videos', { key, json: { avatar_id: ready, script: 'x [sandbox:fail]', webhook_url: `${receiver.url}/d` } })).body.id;

    const deliveries = await receiver.waitFor(4);

    const byType = Object.fromEntries(deliveries.map((d) => [d.body.type, d]));
    const expected: [string, string, string][] = [
      ['avatar.ready', ready, `/v1/avatars/${ready}`],
      ['avatar.failed', failed, `/v1/avatars/${failed}`],
      ['avatar_video.ready', video, `/v1/avatar-videos/${video}`],
      ['avatar_video.failed', videoFailed, `/v1/avatar-videos/${videoFailed}`],
    ];
    for (const [type, id, path] of expected) {
      const d = byType[type]!;
      expect(d, type).toBeDefined();
      const event = verifyWebhook({ rawBody: d.rawBody, headers: d.headers as Record<string, string>, secret: account.signing_secret });
      const current = (await svc.request('GET', path, { key })).body;
      expect(event).toMatchObject({ id: eventIdFor(id, type), object: 'event', type, api_version: 'v1' });
      expect(d.headers['x-service-event-id']).toBe(event.id);
      // Stamped when sent: close to when it arrived (not to now, which a loaded machine puts seconds later).
      expect(Number(d.headers['x-service-timestamp'])).toBeCloseTo(d.at / 1000, -1);
      expect(d.headers['x-service-signature']).toMatch(/^v1=[0-9a-f]{64}$/);
      expect(linksUnsigned(d.body.data.object)).toEqual(linksUnsigned(current));
    }
  });

  it('when the account is opted in to Standard Webhooks, then a delivery verifies under both schemes, X-Service-* unchanged, and the log says both were sent (ND-STANDARD-WEBHOOKS)', async () => {
    const { receiver, svc, key, account } = await setup();
    const plain = await svc.account({ plan: GENEROUS_PLAN, credits: 10_000 });
    await svc.store.accounts.setStandardWebhooks(account.account_id, true);
    const opted = await createAvatar(svc, key, `${receiver.url}/opted`);
    const other = await createAvatar(svc, plain.api_key, `${receiver.url}/plain`);

    const deliveries = await receiver.waitFor(2);

    const d = deliveries.find((x) => x.path === '/opted')!;
    const headers = d.headers as Record<string, string>;
    const service = verifyWebhook({ rawBody: d.rawBody, headers, secret: account.signing_secret, scheme: 'service' });
    const standard = verifyWebhook({ rawBody: d.rawBody, headers, secret: account.signing_secret, scheme: 'standard' });
    expect(service.id).toBe(eventIdFor(opted, 'avatar.ready'));
    expect(standard).toEqual(service);
    expect(headers['webhook-id']).toBe(headers['x-service-event-id']);
    expect(headers['webhook-timestamp']).toBe(headers['x-service-timestamp']);
    expect(headers['x-service-signature']).toMatch(/^v1=[0-9a-f]{64}$/);
    expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    // Tampered bytes fail under the new scheme too.
    expect(() => verifyWebhook({ rawBody: `${d.rawBody} `, headers, secret: account.signing_secret, scheme: 'standard' })).toThrow(/webhook-signature does not match/);

    const p = deliveries.find((x) => x.path === '/plain')!;
    expect(p.headers['webhook-signature']).toBeUndefined();
    expect(p.headers['webhook-id']).toBeUndefined();
    expect(verifyWebhook({ rawBody: p.rawBody, headers: p.headers as Record<string, string>, secret: plain.signing_secret }).id).toBe(eventIdFor(other, 'avatar.ready'));

    const logOf = async (k: string, job: string) =>
      (await eventually(() => svc.request('GET', `/v1/webhook-events?job_id=${job}`, { key: k }), (r) => r.body.data?.[0]?.attempts?.length === 1)).body.data[0].attempts[0];
    expect((await logOf(key, opted)).signature_headers).toEqual(['X-Service-Signature', 'webhook-signature']);
    expect((await logOf(plain.api_key, other)).signature_headers).toEqual(['X-Service-Signature']);
    expect((await svc.request('GET', '/v1/me', { key })).body.standard_webhooks).toBe(true);
    expect((await svc.request('GET', '/v1/me', { key: plain.api_key })).body.standard_webhooks).toBe(false);
  });

  it('sends nothing for a job without webhook_url (WH-OPTIONAL)', async () => {
    const { receiver, svc, key } = await setup();
    const id = (await svc.request('POST', '/v1/avatars', { key, json: promptAvatar() })).body.id;
    await svc.waitTerminal(`/v1/avatars/${id}`, key);
    await new Promise((r) => setTimeout(r, 150));

    expect(receiver.deliveries).toHaveLength(0);
    expect(await svc.store.outbox.countPending()).toBe(0);
  });
});

describe('retries (WH-RETRY, WH-EVENT-ID)', () => {
  it('retries after a 500 with the same event ID and a fresh signature, then stops on 2xx', async () => {
    const { receiver, svc, key, account } = await setup();
    receiver.script = (_p, n) => ({ status: n === 0 ? 500 : 204 });

    const id = await createAvatar(svc, key, `${receiver.url}/hook`);
    const [first, second] = await receiver.waitFor(2);
    const stored = await eventually(() => svc.store.outbox.getEvent(eventIdFor(id, 'avatar.ready')), (e) => e?.status !== 'pending');
    await new Promise((r) => setTimeout(r, 200));

    expect(receiver.deliveries).toHaveLength(2);
    expect(first!.headers['x-service-event-id']).toBe(second!.headers['x-service-event-id']);
    expect(withoutLinkQueries(first!.rawBody)).toBe(withoutLinkQueries(second!.rawBody));
    expect(second!.at - first!.at).toBeGreaterThanOrEqual(55);
    for (const d of [first!, second!]) verifyWebhook({ rawBody: d.rawBody, headers: d.headers as Record<string, string>, secret: account.signing_secret });
    expect(stored).toMatchObject({ status: 'delivered', attempts: 2 });
  });

  it('retries after a timeout', async () => {
    const { receiver, svc, key } = await setup({ WEBHOOK_TIMEOUT_MS: '150' });
    receiver.script = (_p, n) => (n === 0 ? 'hang' : { status: 200 });

    const id = await createAvatar(svc, key, `${receiver.url}/slow`);
    await receiver.waitFor(2);

    const event = await eventually(() => svc.store.outbox.getEvent(eventIdFor(id, 'avatar.ready')), (e) => e?.status !== 'pending');
    expect(event).toMatchObject({ status: 'delivered', attempts: 2 });
  });

  it('counts a redirect as a failure and does not follow it', async () => {
    const { receiver, svc, key } = await setup();
    receiver.script = (path, n) => (path === '/moved' && n === 0 ? { status: 302, headers: { Location: `${receiver.url}/elsewhere` } } : { status: 200 });

    const id = await createAvatar(svc, key, `${receiver.url}/moved`);
    await eventually(() => svc.store.outbox.getEvent(eventIdFor(id, 'avatar.ready')), (e) => e?.status === 'delivered');

    expect(receiver.deliveries.map((d) => d.path)).toEqual(['/moved', '/moved']);
  });

  it("spaces attempts by the contract's schedule (x-webhook-delivery: 5 s, 20 s, 80 s ... with its jitter)", async () => {
    const { retryDelayMs } = await import('../../src/domain/webhookSchedule.ts');
    const { WEBHOOK_DELIVERY } = await import('../../../contract/numbers.ts');
    const schedule = WEBHOOK_DELIVERY.retryDelaysSeconds.map((s) => s * 1000);
    const attempts = WEBHOOK_DELIVERY.attempts;
    const first = schedule[0]!;

    const nominal = Array.from({ length: attempts }, (_, i) => retryDelayMs(i + 1, attempts, first, () => 0.5));
    const spread = [retryDelayMs(1, attempts, first, () => 0), retryDelayMs(1, attempts, first, () => 1)];
    // A shorter base shortens the whole schedule and keeps its shape.
    const halved = Array.from({ length: attempts }, (_, i) => retryDelayMs(i + 1, attempts, first / 2, () => 0.5));

    expect(nominal).toEqual([...schedule, null]);
    expect(spread).toEqual([Math.round(first * (1 - WEBHOOK_DELIVERY.jitter)), Math.round(first * (1 + WEBHOOK_DELIVERY.jitter))]);
    expect(halved).toEqual([...schedule.map((ms) => ms / 2), null]);
    // Past the contract's attempts (WEBHOOK_MAX_ATTEMPTS higher), waits keep growing by the last step.
    expect(retryDelayMs(attempts, attempts + 1, first, () => 0.5)).toBe(schedule.at(-1)! * (schedule.at(-1)! / schedule.at(-2)!));
  });
});

describe('giving up (WH-GIVE-UP, CR-WEBHOOK-INDEPENDENT)', () => {
  it('marks the event failed after the last attempt and changes neither the job nor the credits', async () => {
    const { receiver, svc, key } = await setup();
    receiver.script = () => ({ status: 503 });
    const id = await createAvatar(svc, key, `${receiver.url}/down`);
    const ready = await svc.waitTerminal(`/v1/avatars/${id}`, key);
    const creditsBefore = (await svc.request('GET', '/v1/me', { key })).body.credits;

    const event = await eventually(() => svc.store.outbox.getEvent(eventIdFor(id, 'avatar.ready')), (e) => e?.status === 'failed');

    expect(receiver.deliveries).toHaveLength(3);
    expect(event).toMatchObject({ attempts: 3, lastError: 'status 503' });
    expect(linksUnsigned((await svc.request('GET', `/v1/avatars/${id}`, { key })).body)).toEqual(linksUnsigned(ready));
    expect((await svc.request('GET', '/v1/me', { key })).body.credits).toEqual(creditsBefore);
    const metrics = await (await fetch(`${svc.url}/metrics`)).text();
    expect(metrics).toContain('webhook_deliveries_total{outcome="given_up"} 1');
    expect(metrics).toContain('webhook_deliveries_total{outcome="retry"} 2');
  });
});

describe('a restart in the middle of retries', () => {
  it('resumes the schedule from the stored outbox and delivers with the same event ID', async () => {
    const receiver = await startReceiver();
    open.push(receiver);
    receiver.script = (_p, n) => ({ status: n === 0 ? 500 : 200 });
    const env = { ...FAST, WEBHOOK_BASE_DELAY_MS: '700' };
    const first = await startTestService({ env, random: () => 0.5 });
    const { api_key: key } = await first.account({ plan: GENEROUS_PLAN });
    const id = await createAvatar(first, key, `${receiver.url}/r`);
    await receiver.waitFor(1);
    await first.stop();

    const second = await startTestService({ env, storeEnv: first.storeEnv });
    open.push(second, first);
    const [a, b] = await receiver.waitFor(2, 5000);

    expect(b!.headers['x-service-event-id']).toBe(a!.headers['x-service-event-id']);
    const event = await eventually(() => second.store.outbox.getEvent(eventIdFor(id, 'avatar.ready')), (e) => e?.status !== 'pending');
    expect(event).toMatchObject({ status: 'delivered', attempts: 2 });
  });
});

describe('a slow receiver', () => {
  it('does not hold up deliveries to others', async () => {
    const { receiver, svc, key } = await setup({ WEBHOOK_TIMEOUT_MS: '2000' });
    receiver.script = (path) => (path === '/slow' ? 'hang' : { status: 200 });

    const started = Date.now();
    await createAvatar(svc, key, `${receiver.url}/slow`);
    await createAvatar(svc, key, `${receiver.url}/fast`);
    await eventually(async () => receiver.deliveries.map((d) => d.path), (paths) => paths.includes('/fast'));

    expect(Date.now() - started).toBeLessThan(1500);
  });
});

describe('fair delivery across destinations', () => {
  it('delivers to a healthy receiver within a second while 32 hanging and 32 flooding deliveries wait their turn', async () => {
    // 16 slots, 4 a destination: without fairness the 64 bad deliveries would take them all.
    const { receiver: healthy, svc, key } = await setup({ WEBHOOK_TIMEOUT_MS: '5000', WEBHOOK_CONCURRENCY: '16', WEBHOOK_DESTINATION_CONCURRENCY: '4' });
    const hanging = await startReceiver();
    const flooding = await startReceiver();
    open.push(hanging, flooding);
    hanging.script = () => 'hang';
    flooding.script = () => ({ status: 200, body: Buffer.alloc(4 * 1024 * 1024, 'x') });
    for (let i = 0; i < 32; i++) {
      await createAvatar(svc, key, `${hanging.url}/h${i}`);
      await createAvatar(svc, key, `${flooding.url}/f${i}`);
    }
    await hanging.waitFor(4); // the hanging receiver holds all it is given

    const id = await createAvatar(svc, key, `${healthy.url}/ok`);
    const [delivery] = await healthy.waitFor(1, 5000);
    const record = await svc.waitTerminal(`/v1/avatars/${id}`, key);
    hanging.dropHanging();

    expect(delivery!.at - Date.parse(record.completed_at)).toBeLessThan(1000);
    expect(hanging.deliveries.length).toBeLessThanOrEqual(4 + 4); // its share, plus those its dropped connections let through
  });
});
