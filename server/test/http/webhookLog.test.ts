// The webhook delivery log and replay (ND-WEBHOOK-LOG), on the store the suite runs on:
// every attempt logged with its status or error and duration, never the secret; a
// failed event replayed once with the same event ID and a fresh, valid signature; a
// pending event refused; replays rate-limited in the generation bucket; another
// account's events hidden. The service's clock is the test's, so a retry and a new
// second of X-Service-Timestamp come when the test moves it, not by waiting.
import { afterEach, describe, expect, it } from 'vitest';
import { verifyWebhook } from '../../../client/src/verify.ts';
import { MAX_KEPT_ATTEMPTS, MAX_SHOWN_ATTEMPTS } from '../../src/domain/webhookLog.ts';
import { fakeClock, type FakeClock } from '../support/clock.ts';
import { GENEROUS_PLAN, promptAvatar, startTestService, type Reply, type TestService } from '../support/harness.ts';
import { startReceiver, withoutLinkQueries, type Delivery, type TestReceiver } from '../support/receiver.ts';

/** Two scheduled attempts 60 ms apart: the second one ends the schedule. */
const ENV = { WEBHOOK_BASE_DELAY_MS: '60', WEBHOOK_POLL_MS: '20', WEBHOOK_TIMEOUT_MS: '400', WEBHOOK_MAX_ATTEMPTS: '2' };
const open: { close?: () => Promise<void>; dispose?: () => Promise<void> }[] = [];

afterEach(async () => {
  for (const o of open.splice(0).reverse()) await (o.dispose?.() ?? o.close?.());
});

async function setup(): Promise<{ svc: TestService; receiver: TestReceiver; clock: FakeClock }> {
  const clock = fakeClock(Date.UTC(2026, 10, 2, 9, 0, 0));
  const receiver = await startReceiver();
  const svc = await startTestService({ clock, env: ENV, random: () => 0.5 });
  open.push(receiver, svc);
  return { svc, receiver, clock };
}

/** Asks until `accept` holds: the log is written when the sender records an attempt, after the receiver has it. */
async function eventually(probe: () => Promise<Reply>, accept: (r: Reply) => boolean, timeoutMs = 5000): Promise<Reply> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const r = await probe();
    if (accept(r)) return r;
    if (Date.now() > deadline) throw new Error(`condition not met in ${timeoutMs} ms: ${JSON.stringify(r.body)}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const timestampOf = (d: Delivery) => Number(d.headers['x-service-timestamp']);

describe('the delivery log', () => {
  it('when deliveries fail, then the log shows each attempt with its status and duration; a replay sends the event again with its ID and a new signature', async () => {
    const { svc, receiver, clock } = await setup();
    const account = await svc.account({ plan: GENEROUS_PLAN });
    const key = account.api_key;
    // The replay's delivery is answered only once both replays are: the event stays pending
    // until then, however fast it is delivered, so the second replay always finds it so.
    let replaysAnswered!: () => void;
    const bothAnswered = new Promise<void>((resolve) => (replaysAnswered = resolve));
    receiver.script = (_path, n) => ({ status: n < 2 ? 500 : 200, ...(n === 2 ? { after: bothAnswered } : {}) });
    const jobId = (await svc.request('POST', '/v1/avatars', { key, json: promptAvatar({ webhook_url: `${receiver.url}/hook` }) })).body.id;
    const [first] = await receiver.waitFor(1);
    const eventId = first!.body.id as string;
    const event = () => svc.request('GET', `/v1/webhook-events/${eventId}`, { key });

    // Between the failed first attempt and its retry the event is pending: no replay.
    const waiting = await eventually(event, (r) => r.body.attempts?.length === 1);
    const early = await svc.request('POST', `/v1/webhook-events/${eventId}/replay`, { key });
    const retryDue = clock.now() + 60;
    clock.advance(60); // the retry is due
    const failed = await eventually(event, (r) => r.body.status === 'failed');
    const listed = await svc.request('GET', `/v1/webhook-events?job_id=${jobId}&status=failed`, { key });

    expect(waiting.body).toMatchObject({ status: 'pending', next_attempt_at: new Date(retryDue).toISOString() });
    expect(early.status).toBe(409);
    expect(early.body).toMatchObject({ code: 'webhook_event_pending', status: 409 });
    expect(early.headers.get('ratelimit-limit')).toBe(String(GENEROUS_PLAN.generation.minute));
    expect(failed.body).toMatchObject({ id: eventId, object: 'webhook_event', type: 'avatar.ready', job_id: jobId, url: `${receiver.url}/hook`, status: 'failed', next_attempt_at: null, delivered_at: null });
    expect(failed.body.attempts).toEqual([1, 2].map((number) => ({ number, trigger: 'scheduled', started_at: expect.any(String), duration_ms: expect.any(Number), status_code: 500, error: 'status 500', error_code: 'receiver_status', succeeded: false, signature_headers: ['X-Service-Signature'] })));
    expect(withoutLinkQueries(JSON.stringify(failed.body.payload))).toBe(withoutLinkQueries(first!.rawBody));
    expect(listed.body.data.map((e: { id: string }) => e.id)).toEqual([eventId]);

    // A second later, two replays at once: one is accepted, the other finds it pending.
    clock.advance(1000);
    const creditsBefore = (await svc.request('GET', '/v1/me', { key })).body.credits;
    const replays = await Promise.all([1, 2].map(() => svc.request('POST', `/v1/webhook-events/${eventId}/replay`, { key })));
    replaysAnswered();
    const [again] = (await receiver.waitFor(3)).slice(2);
    const replayed = await eventually(event, (r) => r.body.status !== 'pending');

    expect(replays.map((r) => r.status).sort()).toEqual([202, 409]);
    expect(replays.find((r) => r.status === 202)!.body).toMatchObject({ id: eventId, status: 'pending', next_attempt_at: new Date(clock.now()).toISOString() });
    expect(again!.headers['x-service-event-id']).toBe(eventId);
    expect(withoutLinkQueries(again!.rawBody)).toBe(withoutLinkQueries(first!.rawBody));
    expect(timestampOf(again!)).toBeGreaterThan(timestampOf(first!));
    expect(again!.headers['x-service-signature']).not.toBe(first!.headers['x-service-signature']);
    expect(verifyWebhook({ rawBody: again!.rawBody, headers: again!.headers as Record<string, string>, secret: account.signing_secret, now: Math.floor(clock.now() / 1000) }).id).toBe(eventId);
    expect(replayed.body).toMatchObject({ status: 'delivered', next_attempt_at: null, delivered_at: new Date(clock.now()).toISOString() });
    expect(replayed.body.attempts.at(-1)).toEqual({ number: 3, trigger: 'replay', started_at: new Date(clock.now()).toISOString(), duration_ms: expect.any(Number), status_code: 200, error: null, error_code: null, succeeded: true, signature_headers: ['X-Service-Signature'] });
    expect(receiver.deliveries).toHaveLength(3); // one replay asked for, one attempt
    expect((await svc.request('GET', '/v1/me', { key })).body.credits).toEqual(creditsBefore);

    // What the log shows never includes the secret nor a signature sent.
    const shown = JSON.stringify([waiting.body, failed.body, listed.body, replays.map((r) => r.body), replayed.body]);
    expect(shown).not.toContain(account.signing_secret);
    for (const d of receiver.deliveries) expect(shown).not.toContain(String(d.headers['x-service-signature']).slice(3));
  });

  it('when a replayed delivery fails, then it is logged as a replay and not retried', async () => {
    const { svc, receiver, clock } = await setup();
    const { api_key: key } = await svc.account({ plan: GENEROUS_PLAN });
    receiver.script = () => ({ status: 503 });
    await svc.request('POST', '/v1/avatars', { key, json: promptAvatar({ webhook_url: `${receiver.url}/down` }) });
    const eventId = (await receiver.waitFor(1))[0]!.body.id as string;
    const event = () => svc.request('GET', `/v1/webhook-events/${eventId}`, { key });
    await eventually(event, (r) => r.body.attempts?.length === 1);
    clock.advance(60);
    await eventually(event, (r) => r.body.status === 'failed');

    const replay = await svc.request('POST', `/v1/webhook-events/${eventId}/replay`, { key });
    const after = await eventually(event, (r) => r.body.attempts?.length === 3 && r.body.status !== 'pending');
    clock.advance(3_600_000); // far past any retry the schedule could have had
    await new Promise((resolve) => setTimeout(resolve, 100)); // a few of the sender's polls: nothing may come
    const later = await event();

    expect(replay.status).toBe(202);
    expect(after.body).toMatchObject({ status: 'failed', next_attempt_at: null });
    expect(after.body.attempts.at(-1)).toMatchObject({ number: 3, trigger: 'replay', status_code: 503, error: 'status 503', succeeded: false });
    expect(receiver.deliveries).toHaveLength(3);
    expect(later.body.attempts).toHaveLength(3);
  });

  it('when an attempt is recorded between reading an event and its attempts, then the answer is the event as it was read', async () => {
    const { svc, receiver } = await setup();
    const { api_key: key } = await svc.account({ plan: GENEROUS_PLAN });
    receiver.script = () => ({ status: 500 });
    await svc.request('POST', '/v1/avatars', { key, json: promptAvatar({ webhook_url: `${receiver.url}/hook` }) });
    const eventId = (await receiver.waitFor(1))[0]!.body.id as string;
    const event = () => svc.request('GET', `/v1/webhook-events/${eventId}`, { key });
    await eventually(event, (r) => r.body.attempts?.length === 1);
    // The retry's outcome lands just after the event is read, before its attempts are.
    const outbox = svc.store.outbox;
    const getEvent = outbox.getEvent.bind(outbox);
    outbox.getEvent = async (id) => {
      const read = await getEvent(id);
      outbox.getEvent = getEvent;
      await outbox.markFailed(id, read!.attempts + 1, { trigger: 'scheduled', startedAt: read!.nextAttemptAt, durationMs: 1, statusCode: 500, error: 'status 500' }, 'unknown');
      return read;
    };

    const racing = await event();
    const after = await event();

    expect(racing.body).toMatchObject({ status: 'pending', attempts: [expect.objectContaining({ number: 1 })] });
    expect(after.body).toMatchObject({ status: 'failed', attempts: [expect.objectContaining({ number: 1 }), expect.objectContaining({ number: 2 })] });
  });

  it('when an event has more attempts than the store keeps, then it shows the latest and counts them all, and the store holds its latest MAX_KEPT_ATTEMPTS', async () => {
    const { svc, receiver } = await setup();
    const { api_key: key } = await svc.account({ plan: GENEROUS_PLAN });
    receiver.script = () => ({ status: 200 });
    await svc.request('POST', '/v1/avatars', { key, json: promptAvatar({ webhook_url: `${receiver.url}/hook` }) });
    const eventId = (await receiver.waitFor(1))[0]!.body.id as string;
    const event = () => svc.request('GET', `/v1/webhook-events/${eventId}`, { key });
    await eventually(event, (r) => r.body.status === 'delivered');
    // Replays without end, recorded as the sender records each.
    const total = MAX_KEPT_ATTEMPTS * 3;
    for (let n = 2; n <= total; n++) {
      await svc.store.outbox.markFailed(eventId, n, { trigger: 'replay', startedAt: n, durationMs: 1, statusCode: 500, error: 'status 500' }, 'unknown');
    }

    const read = await event();

    expect(read.body.attempts_total).toBe(total);
    expect(read.body.attempts.map((a: { number: number }) => a.number)).toEqual(Array.from({ length: MAX_SHOWN_ATTEMPTS }, (_, i) => total - MAX_SHOWN_ATTEMPTS + 1 + i));
    expect((await svc.store.outbox.attemptsOf([eventId])).map((a) => a.number)).toEqual(Array.from({ length: MAX_KEPT_ATTEMPTS }, (_, i) => total - MAX_KEPT_ATTEMPTS + 1 + i));
  });

  it('when the receiver cannot be reached, then the attempt is logged with no status and the reason as a category, never the address or port', async () => {
    const { svc, receiver } = await setup();
    const { api_key: key } = await svc.account({ plan: GENEROUS_PLAN });
    const url = `${receiver.url}/gone`;
    await receiver.close(); // nothing listens there any more
    await svc.request('POST', '/v1/avatars', { key, json: promptAvatar({ webhook_url: url }) });

    const page = await eventually(() => svc.request('GET', '/v1/webhook-events', { key }), (r) => r.body.data?.[0]?.attempts.length === 1);

    const attempt = page.body.data[0].attempts[0];
    expect(attempt).toMatchObject({ number: 1, status_code: null, error_code: 'connection_refused', error: expect.stringMatching(/refused the connection/), succeeded: false });
    expect(JSON.stringify(page.body.data[0].attempts)).not.toMatch(/ECONNREFUSED|127\.0\.0\.1|:\d{4,5}/);
  });
});

describe('who may read and replay', () => {
  it('when another account asks for an event, then it is not found, listed or replayed; an ID this service could not make is not found', async () => {
    const { svc, receiver } = await setup();
    const { api_key: owner } = await svc.account({ plan: GENEROUS_PLAN });
    const { api_key: other } = await svc.account({ plan: GENEROUS_PLAN });
    const jobId = (await svc.request('POST', '/v1/avatars', { key: owner, json: promptAvatar({ webhook_url: `${receiver.url}/mine` }) })).body.id;
    const eventId = (await receiver.waitFor(1))[0]!.body.id as string;

    const read = await svc.request('GET', `/v1/webhook-events/${eventId}`, { key: other });
    const replay = await svc.request('POST', `/v1/webhook-events/${eventId}/replay`, { key: other });
    const listed = await svc.request('GET', `/v1/webhook-events?job_id=${jobId}`, { key: other });
    const madeUp = await svc.request('GET', '/v1/webhook-events/evt_not-one-of-ours', { key: owner });

    for (const r of [read, replay, madeUp]) expect(r.body).toMatchObject({ status: 404, code: 'not_found' });
    expect(listed.body).toEqual({ object: 'list', data: [], has_more: false, next_cursor: null });
  });

  it('when the generation bucket is used up, then a replay is refused with 429 and the window headers', async () => {
    const { svc, receiver } = await setup();
    const { api_key: key } = await svc.account({ plan: { read: GENEROUS_PLAN.read, generation: { minute: 2, day: 100 } } });
    await svc.request('POST', '/v1/avatars', { key, json: promptAvatar({ webhook_url: `${receiver.url}/hook` }) });
    const eventId = (await receiver.waitFor(1))[0]!.body.id as string;
    await eventually(() => svc.request('GET', `/v1/webhook-events/${eventId}`, { key }), (r) => r.body.status === 'delivered');

    const accepted = await svc.request('POST', `/v1/webhook-events/${eventId}/replay`, { key });
    const refused = await svc.request('POST', `/v1/webhook-events/${eventId}/replay`, { key });

    expect(accepted.status).toBe(202);
    expect(accepted.headers.get('ratelimit-remaining')).toBe('0');
    expect(refused.status).toBe(429);
    expect(refused.body.code).toBe('rate_limit_exceeded');
    expect(refused.headers.get('ratelimit-limit')).toBe('2');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
  });
});

describe('GET /v1/webhook-events', () => {
  it('when an account has events, then they come newest first, a page at a time, each once; a bad parameter is named', async () => {
    const { svc, receiver, clock } = await setup();
    const { api_key: key } = await svc.account({ plan: GENEROUS_PLAN });
    const jobs: string[] = [];
    for (let i = 0; i < 3; i++) {
      jobs.push((await svc.request('POST', '/v1/avatars', { key, json: promptAvatar({ webhook_url: `${receiver.url}/e${i}` }) })).body.id);
      await receiver.waitFor(i + 1);
      clock.advance(1000); // each event its own creation time
    }

    const first = await svc.request('GET', '/v1/webhook-events?limit=2', { key });
    const second = await svc.request('GET', `/v1/webhook-events?limit=2&cursor=${first.body.next_cursor}`, { key });
    const refused = await svc.request('GET', '/v1/webhook-events?status=sent&limit=0', { key });

    expect([...first.body.data, ...second.body.data].map((e: { job_id: string }) => e.job_id)).toEqual([...jobs].reverse());
    expect(first.body.has_more).toBe(true);
    expect(second.body).toMatchObject({ has_more: false, next_cursor: null });
    expect(refused.status).toBe(422);
    expect(refused.body.errors).toEqual([expect.objectContaining({ field: 'limit', rule: 'minimum' }), expect.objectContaining({ field: 'status', rule: 'enum' })]);
  });
});
