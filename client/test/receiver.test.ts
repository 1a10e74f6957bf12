import type { AddressInfo } from 'node:net';
import { createServer, type Server } from 'node:http';
import Koa from 'koa';
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryEventStore, webhookReceiver, type ProcessedEventStore } from '../src/receiver.ts';
import { WEBHOOK_EVENT_ID_HEADER, WEBHOOK_SIGNATURE_HEADER, WEBHOOK_TIMESTAMP_HEADER, signStandardWebhook, signWebhook } from '../../contract/webhookSignature.ts';
import type { WebhookEvent } from '../src/verify.ts';

const SECRET = 'whsec_receiver_test';
const NOW = 1_800_000_000;
let server: Server | undefined;

afterEach(async () => {
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
  server = undefined;
});

function event(id: string, type = 'avatar.ready', objectId = 'av_1') {
  return JSON.stringify({ id, object: 'event', type, api_version: 'v1', created_at: '2026-01-01T00:00:00Z', data: { object: { id: objectId } } });
}

async function start(options: { onEvent: (event: WebhookEvent) => void | Promise<void>; store?: ProcessedEventStore }) {
  const app = new Koa();
  app.use(webhookReceiver({ secret: SECRET, now: () => NOW, ...options }));
  server = createServer(app.callback());
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return async (body: string, secret = SECRET, timestamp = NOW) => {
    const id = (JSON.parse(body) as { id: string }).id;
    const response = await fetch(`http://127.0.0.1:${port}/hooks`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        [WEBHOOK_EVENT_ID_HEADER]: id,
        [WEBHOOK_TIMESTAMP_HEADER]: String(timestamp),
        [WEBHOOK_SIGNATURE_HEADER]: signWebhook(secret, timestamp, body),
      },
      body,
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };
}

describe('webhookReceiver', () => {
  it('when an event arrives, then it is handled once and acknowledged with 200', async () => {
    const seen: string[] = [];
    const post = await start({ onEvent: (e) => void seen.push(e.id) });
    expect(await post(event('evt_a'))).toEqual({ status: 200, body: { received: true, duplicate: false } });
    expect(seen).toEqual(['evt_a']);
  });

  it('when the same event arrives again, then it answers 2xx and does not handle it twice (WH-DUPLICATES)', async () => {
    const seen: string[] = [];
    const post = await start({ onEvent: (e) => void seen.push(e.id) });
    await post(event('evt_a'));
    const again = await post(event('evt_a'));
    expect(again.status).toBe(200);
    expect(again.body.duplicate).toBe(true);
    expect(seen).toEqual(['evt_a']);
  });

  it('when copies arrive at the same time, then the handler still runs once', async () => {
    let calls = 0;
    const post = await start({
      onEvent: async () => {
        calls++;
        await new Promise((resolve) => setTimeout(resolve, 50));
      },
    });
    const answers = await Promise.all([post(event('evt_c')), post(event('evt_c')), post(event('evt_c'))]);
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
    expect(calls).toBe(1);
  });

  it('when events of different jobs arrive out of order, then each is handled (WH-ORDER)', async () => {
    const seen: string[] = [];
    const post = await start({ onEvent: (e) => void seen.push(`${e.type}:${e.data.object.id}`) });
    await post(event('evt_2', 'avatar_video.ready', 'vid_1'));
    await post(event('evt_1', 'avatar.ready', 'av_1'));
    expect(seen).toEqual(['avatar_video.ready:vid_1', 'avatar.ready:av_1']);
  });

  it('when verification fails, then 400 names the reason and the handler is not called', async () => {
    const seen: string[] = [];
    const post = await start({ onEvent: (e) => void seen.push(e.id) });
    const wrongSecret = await post(event('evt_a'), 'whsec_wrong');
    expect(wrongSecret).toMatchObject({ status: 400, body: { error: 'bad_signature', header: WEBHOOK_SIGNATURE_HEADER } });
    const stale = await post(event('evt_b'), SECRET, NOW - 301);
    expect(stale).toMatchObject({ status: 400, body: { error: 'timestamp_too_old', header: WEBHOOK_TIMESTAMP_HEADER } });
    expect(seen).toEqual([]);
  });

  it('when the handler throws, then 500 and the event is not stored, so a retry is handled', async () => {
    let attempts = 0;
    const post = await start({
      onEvent: () => {
        attempts++;
        if (attempts === 1) throw new Error('database down');
      },
    });
    expect((await post(event('evt_r'))).status).toBe(500);
    expect(await post(event('evt_r'))).toMatchObject({ status: 200, body: { duplicate: false } });
    expect(attempts).toBe(2);
  });

  it('when a store is plugged in, then it decides what counts as processed', async () => {
    const store = new MemoryEventStore();
    store.add('evt_old');
    const seen: string[] = [];
    const post = await start({ onEvent: (e) => void seen.push(e.id), store });
    expect((await post(event('evt_old'))).body.duplicate).toBe(true);
    expect(seen).toEqual([]);
    expect(store.has('evt_old')).toBe(true);
  });

  it('when the memory store is full, then the oldest IDs are forgotten first', () => {
    const store = new MemoryEventStore(2);
    store.add('a');
    store.add('b');
    store.add('c');
    expect([store.has('a'), store.has('b'), store.has('c')]).toEqual([false, true, true]);
  });
});

describe('webhookReceiver under Standard Webhooks (ND-STANDARD-WEBHOOKS)', () => {
  const STANDARD_SECRET = 'whsec_q1Xw-8nT3vYk_Rb2Lp9sZf0HcUe4Mj7A';

  async function startStandard(scheme?: 'service' | 'standard' | 'either') {
    const seen: string[] = [];
    const app = new Koa();
    app.use(webhookReceiver({ secret: STANDARD_SECRET, now: () => NOW, onEvent: (e) => void seen.push(e.id), ...(scheme ? { scheme } : {}) }));
    server = createServer(app.callback());
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const post = async (body: string) => {
      const id = (JSON.parse(body) as { id: string }).id;
      const response = await fetch(`http://127.0.0.1:${port}/hooks`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'webhook-id': id, 'webhook-timestamp': String(NOW), 'webhook-signature': signStandardWebhook(STANDARD_SECRET, id, NOW, body) },
        body,
      });
      return response.status;
    };
    return { post, seen };
  }

  it('when a delivery carries only the webhook-* headers, then it is handled once, and again is a duplicate', async () => {
    const { post, seen } = await startStandard();
    expect(await post(event('evt_s'))).toBe(200);
    expect(await post(event('evt_s'))).toBe(200);
    expect(seen).toEqual(['evt_s']);
  });

  it('when the receiver insists on the X-Service-* headers, then a webhook-*-only delivery is refused', async () => {
    const { post, seen } = await startStandard('service');
    expect(await post(event('evt_t'))).toBe(400);
    expect(seen).toEqual([]);
  });
});
