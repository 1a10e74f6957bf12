// A webhook's file links (ND-FILE-LINKS) are signed at each attempt, on the account's
// time then, so a retry or a replay sent long after the job ended carries links valid for
// their whole lifetime from its send; the signatures, the service's and Standard
// Webhooks', cover the body sent. The service's clock stands still (the account's moves
// by the sandbox clock), so each send's account time is known to the millisecond; it
// stands at the real time, which the Standard Webhooks library judges timestamps by.
import { Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, it } from 'vitest';
import { verifyWebhook } from '../../../client/src/verify.ts';
import { FILE_LINKS } from '../../../contract/numbers.ts';
import type { GenerationEngine } from '../../src/domain/engine.ts';
import { eventIdFor } from '../../src/domain/ids.ts';
import { fakeClock } from '../support/clock.ts';
import { GENEROUS_PLAN, promptAvatar, startTestService, type TestService } from '../support/harness.ts';
import { startReceiver, withoutLinkQueries, type TestReceiver } from '../support/receiver.ts';
import { eventually } from '../support/eventually.ts';

const LIFETIME_S = FILE_LINKS.lifetimeSeconds;
/** One retry 60 ms after a failed first attempt (on the service's clock, which the test holds). */
const ENV = { WEBHOOK_BASE_DELAY_MS: '60', WEBHOOK_POLL_MS: '20', WEBHOOK_TIMEOUT_MS: '400', WEBHOOK_MAX_ATTEMPTS: '3' };

const engine: GenerationEngine = {
  generate: async () => ({ status: 'ready', result: { duration_seconds: 1 } }),
  artifact: async () => ({ contentType: 'video/mp4', body: new Uint8Array(64) }),
};

const open: { close?: () => Promise<void>; dispose?: () => Promise<void> }[] = [];

afterEach(async () => {
  for (const o of open.splice(0).reverse()) await (o.dispose?.() ?? o.close?.());
});

async function setup(options: { standardWebhooks?: boolean } = {}) {
  const clock = fakeClock(Date.now());
  const receiver = await startReceiver();
  const svc = await startTestService({ engine, clock, env: ENV, random: () => 0.5 });
  open.push(receiver, svc);
  const account = await svc.account({ plan: GENEROUS_PLAN, credits: 100_000 });
  if (options.standardWebhooks) await svc.store.accounts.setStandardWebhooks(account.account_id, true);
  return { clock, receiver, svc, account, key: account.api_key };
}

/** A ready video whose webhook goes to the receiver: its event's ID. */
async function videoWithWebhook(svc: TestService, key: string, receiver: TestReceiver): Promise<string> {
  const avatar = await svc.request('POST', '/v1/avatars', { key, json: promptAvatar() });
  await svc.waitTerminal(`/v1/avatars/${avatar.body.id}`, key);
  const video = await svc.request('POST', '/v1/avatar-videos', { key, json: { avatar_id: avatar.body.id, script: 'Hello there.', webhook_url: `${receiver.url}/hook` } });
  return eventIdFor(video.body.id, 'avatar_video.ready');
}

async function advance(svc: TestService, key: string, seconds: number): Promise<void> {
  expect((await svc.request('POST', '/v1/test_helpers/clock/advance', { key, json: { seconds } })).status).toBe(200);
}

/** An event's video link, reachable from the test (the record names the public base URL). */
const videoLink = (svc: TestService, event: { data: { object: { video_url: string } } }) => new URL(event.data.object.video_url.replace(svc.config.publicBaseUrl, svc.url));
/** The Unix second a link given on the account's time `accountMs` expires at: a whole lifetime later. */
const lifetimeFrom = (accountMs: number) => Math.floor(accountMs / 1000) + LIFETIME_S;
const statusOf = async (url: URL) => (await fetch(url)).status;

describe('a webhook retried late', () => {
  it('when the retry is sent after the account clock moved past most of the lifetime, then its link downloads and expires a full lifetime after that send', async () => {
    const { clock, receiver, svc, account, key } = await setup();
    receiver.script = (_path, n) => ({ status: n === 0 ? 500 : 200 });
    const eventId = await videoWithWebhook(svc, key, receiver);
    const [first] = await receiver.waitFor(1);
    await eventually(() => svc.store.outbox.getEvent(eventId), (e) => e?.attempts === 1);
    const moved = LIFETIME_S - 3600; // an hour of the first link's lifetime left

    await advance(svc, key, moved); // the move passes the retry's time: it is due at once
    const [, retry] = await receiver.waitFor(2);

    const sentAt = clock.now() + moved * 1000;
    const link = videoLink(svc, retry!.body);
    expect(Number(link.searchParams.get('expires'))).toBe(lifetimeFrom(sentAt));
    expect(Number(videoLink(svc, first!.body).searchParams.get('expires'))).toBe(lifetimeFrom(clock.now()));
    expect(await statusOf(link)).toBe(200);
    expect(withoutLinkQueries(retry!.rawBody)).toBe(withoutLinkQueries(first!.rawBody));
    expect(verifyWebhook({ rawBody: retry!.rawBody, headers: retry!.headers as Record<string, string>, secret: account.signing_secret }).id).toBe(eventId);

    // The first attempt's link lapses an hour on; the retry's holds until a lifetime from its send.
    await advance(svc, key, LIFETIME_S - 1);
    expect(await statusOf(videoLink(svc, first!.body))).toBe(403);
    expect(await statusOf(link)).toBe(200);
    await advance(svc, key, 1);
    expect(await statusOf(link)).toBe(403);
  });
});

describe('a webhook replayed after the lifetime', () => {
  it('when the replay is asked for after the account clock moved past 7 days, then its link downloads, and both signatures verify over the body sent', async () => {
    const { clock, receiver, svc, account, key } = await setup({ standardWebhooks: true });
    const eventId = await videoWithWebhook(svc, key, receiver);
    const [first] = await receiver.waitFor(1);
    await eventually(() => svc.store.outbox.getEvent(eventId), (e) => e?.status === 'delivered');
    const moved = LIFETIME_S + 86_400;
    await advance(svc, key, moved);

    const replay = await svc.request('POST', `/v1/webhook-events/${eventId}/replay`, { key });
    const [, again] = await receiver.waitFor(2);

    const link = videoLink(svc, again!.body);
    const headers = again!.headers as Record<string, string>;
    expect(replay.status).toBe(202);
    expect(await statusOf(videoLink(svc, first!.body))).toBe(403); // the link signed at the job's end has lapsed
    expect(await statusOf(link)).toBe(200);
    expect(Number(link.searchParams.get('expires'))).toBe(lifetimeFrom(clock.now() + moved * 1000));
    expect(withoutLinkQueries(again!.rawBody)).toBe(withoutLinkQueries(first!.rawBody));
    expect((new Webhook(account.signing_secret).verify(again!.rawBody, headers) as { id: string }).id).toBe(eventId);
    expect(verifyWebhook({ rawBody: again!.rawBody, headers, secret: account.signing_secret, scheme: 'service' }).id).toBe(eventId);
    // Signed over the bytes sent, not the stored ones, whose links are not these.
    const stored = (await svc.store.outbox.getEvent(eventId))!.payload;
    expect(stored).not.toBe(again!.rawBody);
    expect(() => new Webhook(account.signing_secret).verify(stored, headers)).toThrow();
  });

  it('when the delivery log is read after the lifetime, then its payload is the body as sent with links signed at the read, which download', async () => {
    const { receiver, svc, key } = await setup();
    const eventId = await videoWithWebhook(svc, key, receiver);
    const [first] = await receiver.waitFor(1);
    await eventually(() => svc.store.outbox.getEvent(eventId), (e) => e?.status === 'delivered');
    await advance(svc, key, LIFETIME_S + 86_400);

    const logged = await svc.request('GET', `/v1/webhook-events/${eventId}`, { key });

    const shown = JSON.stringify(logged.body.payload);
    expect(withoutLinkQueries(shown)).toBe(withoutLinkQueries(first!.rawBody));
    expect(await statusOf(videoLink(svc, first!.body))).toBe(403);
    expect(await statusOf(videoLink(svc, logged.body.payload))).toBe(200);
  });
});
