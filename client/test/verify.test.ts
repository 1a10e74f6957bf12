import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  WEBHOOK_EVENT_ID_HEADER,
  WEBHOOK_SIGNATURE_HEADER,
  WEBHOOK_TIMESTAMP_HEADER,
  WEBHOOK_TOLERANCE_SECONDS,
  signWebhook,
} from '../../contract/webhookSignature.ts';
import { WebhookVerificationError, isKnownWebhookEvent, verifyWebhook, type WebhookEvent } from '../src/verify.ts';

const SECRET = 'whsec_test_receiver';
const NOW = 1_762_074_881;
const EVENT_ID = 'evt_5c1e0f3a9b7d4e2f8a6c0b1d3e5f7a9b';
const BODY = JSON.stringify({
  id: EVENT_ID,
  object: 'event',
  type: 'avatar.ready',
  api_version: 'v1',
  created_at: '2026-11-02T09:14:41.532Z',
  data: { object: { id: 'av_3k9x2m7q4w8e1r5t6y0u2i4o', object: 'avatar', status: 'ready' } },
});

function signed(body = BODY, timestamp = NOW, secret = SECRET, eventId = EVENT_ID): Record<string, string> {
  return {
    [WEBHOOK_EVENT_ID_HEADER]: eventId,
    [WEBHOOK_TIMESTAMP_HEADER]: String(timestamp),
    [WEBHOOK_SIGNATURE_HEADER]: signWebhook(secret, timestamp, body),
  };
}

function refusal(run: () => unknown): WebhookVerificationError {
  try {
    run();
  } catch (error) {
    if (error instanceof WebhookVerificationError) return error;
    throw error;
  }
  throw new Error('expected a WebhookVerificationError');
}

describe('verifyWebhook', () => {
  it('when everything matches, then it returns the parsed event', () => {
    const event = verifyWebhook({ rawBody: BODY, headers: signed(), secret: SECRET, now: NOW });
    expect(event.id).toBe(EVENT_ID);
    expect(isKnownWebhookEvent(event)).toBe(true);
    if (event.type === 'avatar.ready') expect(event.data.object.status).toBe('ready');
  });

  it('when headers come as lower-case Node headers or a fetch Headers, then both work', () => {
    const lower = Object.fromEntries(Object.entries(signed()).map(([k, v]) => [k.toLowerCase(), v]));
    expect(verifyWebhook({ rawBody: BODY, headers: lower, secret: SECRET, now: NOW }).id).toBe(EVENT_ID);
    expect(verifyWebhook({ rawBody: Buffer.from(BODY), headers: new Headers(signed()), secret: SECRET, now: NOW }).id).toBe(EVENT_ID);
  });

  it('when the body was tampered with, then bad_signature', () => {
    const headers = signed();
    const tampered = BODY.replace('"ready"}', '"failed"}');
    expect(refusal(() => verifyWebhook({ rawBody: tampered, headers, secret: SECRET, now: NOW }))).toMatchObject({
      reason: 'bad_signature',
      header: WEBHOOK_SIGNATURE_HEADER,
    });
  });

  it('when the body was re-serialised (same JSON, other bytes), then bad_signature', () => {
    const headers = signed();
    const pretty = JSON.stringify(JSON.parse(BODY), null, 2);
    expect(refusal(() => verifyWebhook({ rawBody: pretty, headers, secret: SECRET, now: NOW })).reason).toBe('bad_signature');
  });

  it('when signed with another secret, then bad_signature', () => {
    const headers = signed(BODY, NOW, 'whsec_someone_else');
    expect(refusal(() => verifyWebhook({ rawBody: BODY, headers, secret: SECRET, now: NOW })).reason).toBe('bad_signature');
  });

  it('when the signature covers the body alone, then bad_signature', () => {
    // What a sender that forgot the timestamp would send: HMAC(body).
    const headers = { ...signed(), [WEBHOOK_SIGNATURE_HEADER]: `v1=${createHmac('sha256', SECRET).update(BODY).digest('hex')}` };
    expect(refusal(() => verifyWebhook({ rawBody: BODY, headers, secret: SECRET, now: NOW })).reason).toBe('bad_signature');
  });

  it('when the timestamp is older than the tolerance, then timestamp_too_old', () => {
    const old = NOW - WEBHOOK_TOLERANCE_SECONDS - 1;
    expect(refusal(() => verifyWebhook({ rawBody: BODY, headers: signed(BODY, old), secret: SECRET, now: NOW }))).toMatchObject({
      reason: 'timestamp_too_old',
      header: WEBHOOK_TIMESTAMP_HEADER,
    });
  });

  it('when the timestamp is further ahead than the tolerance, then timestamp_in_future', () => {
    const ahead = NOW + WEBHOOK_TOLERANCE_SECONDS + 1;
    expect(refusal(() => verifyWebhook({ rawBody: BODY, headers: signed(BODY, ahead), secret: SECRET, now: NOW })).reason).toBe(
      'timestamp_in_future',
    );
  });

  it('when the timestamp is exactly at either edge of the tolerance, then it is accepted', () => {
    for (const edge of [NOW - WEBHOOK_TOLERANCE_SECONDS, NOW + WEBHOOK_TOLERANCE_SECONDS]) {
      expect(verifyWebhook({ rawBody: BODY, headers: signed(BODY, edge), secret: SECRET, now: NOW }).id).toBe(EVENT_ID);
    }
  });

  it('when a custom tolerance is given, then it is used', () => {
    const headers = signed(BODY, NOW - 61);
    expect(refusal(() => verifyWebhook({ rawBody: BODY, headers, secret: SECRET, now: NOW, toleranceSeconds: 60 })).reason).toBe(
      'timestamp_too_old',
    );
  });

  it.each([WEBHOOK_EVENT_ID_HEADER, WEBHOOK_TIMESTAMP_HEADER, WEBHOOK_SIGNATURE_HEADER])(
    'when %s is missing, then missing_header names it',
    (header) => {
      const headers = signed();
      delete headers[header];
      expect(refusal(() => verifyWebhook({ rawBody: BODY, headers, secret: SECRET, now: NOW }))).toMatchObject({
        reason: 'missing_header',
        header,
      });
    },
  );

  it.each([
    ['milliseconds', String(NOW * 1000 + 123)],
    ['fractional seconds', `${NOW}.5`],
    ['a date', 'Mon, 02 Nov 2026 09:14:41 GMT'],
  ])('when the timestamp is %s, then malformed_timestamp', (_name, value) => {
    const headers = { ...signed(), [WEBHOOK_TIMESTAMP_HEADER]: value };
    expect(refusal(() => verifyWebhook({ rawBody: BODY, headers, secret: SECRET, now: NOW })).reason).toBe('malformed_timestamp');
  });

  it.each([
    ['no scheme', 'deadbeef'.repeat(8)],
    ['another scheme', `v0=${'a'.repeat(64)}`],
    ['upper-case hex', `v1=${'A'.repeat(64)}`],
    ['short', 'v1=abc'],
  ])('when the signature has %s, then malformed_signature', (_name, value) => {
    const headers = { ...signed(), [WEBHOOK_SIGNATURE_HEADER]: value };
    expect(refusal(() => verifyWebhook({ rawBody: BODY, headers, secret: SECRET, now: NOW })).reason).toBe('malformed_signature');
  });

  it('when the signed body is not an event, then malformed_body', () => {
    for (const body of ['not json', '[]', '{"id":"evt_1","type":"avatar.ready","data":{}}']) {
      expect(refusal(() => verifyWebhook({ rawBody: body, headers: signed(body), secret: SECRET, now: NOW })).reason).toBe(
        'malformed_body',
      );
    }
  });

  it('when the body id differs from X-Service-Event-Id, then id_mismatch', () => {
    const headers = signed(BODY, NOW, SECRET, 'evt_00000000000000000000000000000000');
    expect(refusal(() => verifyWebhook({ rawBody: BODY, headers, secret: SECRET, now: NOW }))).toMatchObject({
      reason: 'id_mismatch',
      header: WEBHOOK_EVENT_ID_HEADER,
    });
  });

  it('when the event type is new to this client, then it is returned, not refused (ND-COMPAT)', () => {
    const body = JSON.stringify({ id: EVENT_ID, type: 'avatar.archived', data: { object: { id: 'av_1' } } });
    const event: WebhookEvent = verifyWebhook({ rawBody: body, headers: signed(body), secret: SECRET, now: NOW });
    expect(isKnownWebhookEvent(event)).toBe(false);
    expect(event.data.object.id).toBe('av_1');
  });
});

describe('verifyWebhook under Standard Webhooks (ND-STANDARD-WEBHOOKS)', () => {
  const STANDARD_SECRET = 'whsec_q1Xw-8nT3vYk_Rb2Lp9sZf0HcUe4Mj7A';
  /** Signed independently of contract/: the HMAC keyed with the bytes the base64 after whsec_ encodes. */
  function standard(body = BODY, timestamp = NOW, secret = STANDARD_SECRET, eventId = EVENT_ID): Record<string, string> {
    const key = Buffer.from(secret.slice('whsec_'.length).replaceAll('-', '+').replaceAll('_', '/'), 'base64');
    const signature = createHmac('sha256', key).update(`${eventId}.${timestamp}.${body}`).digest('base64');
    return { 'webhook-id': eventId, 'webhook-timestamp': String(timestamp), 'webhook-signature': `v1,${signature}` };
  }

  it('when a delivery carries only the webhook-* headers, then it verifies and returns the event', () => {
    expect(verifyWebhook({ rawBody: BODY, headers: standard(), secret: STANDARD_SECRET, now: NOW }).id).toBe(EVENT_ID);
    expect(verifyWebhook({ rawBody: BODY, headers: new Headers(standard()), secret: STANDARD_SECRET, now: NOW, scheme: 'standard' }).id).toBe(EVENT_ID);
  });

  it('when a delivery carries both, then either scheme verifies it, and the default checks X-Service-*', () => {
    const both = { ...signed(BODY, NOW, STANDARD_SECRET), ...standard() };
    expect(verifyWebhook({ rawBody: BODY, headers: both, secret: STANDARD_SECRET, now: NOW, scheme: 'service' }).id).toBe(EVENT_ID);
    expect(verifyWebhook({ rawBody: BODY, headers: both, secret: STANDARD_SECRET, now: NOW, scheme: 'standard' }).id).toBe(EVENT_ID);
    const brokenService = { ...both, [WEBHOOK_SIGNATURE_HEADER]: `v1=${'0'.repeat(64)}` };
    expect(refusal(() => verifyWebhook({ rawBody: BODY, headers: brokenService, secret: STANDARD_SECRET, now: NOW })).header).toBe(WEBHOOK_SIGNATURE_HEADER);
  });

  it('when webhook-signature lists several signatures (a secret being rotated), then one that matches is enough', () => {
    const headers = standard();
    headers['webhook-signature'] = `v1,${Buffer.alloc(32).toString('base64')} v2,whatever ${headers['webhook-signature']}`;
    expect(verifyWebhook({ rawBody: BODY, headers, secret: STANDARD_SECRET, now: NOW }).id).toBe(EVENT_ID);
  });

  it.each([
    ['the body was changed', 'bad_signature', 'webhook-signature', () => ({ rawBody: `${BODY} `, headers: standard() })],
    ['another secret signed it', 'bad_signature', 'webhook-signature', () => ({ rawBody: BODY, headers: standard(BODY, NOW, 'whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA') })],
    ['the signature is not v1,<base64>', 'malformed_signature', 'webhook-signature', () => ({ rawBody: BODY, headers: { ...standard(), 'webhook-signature': 'v1=abc' } })],
    ['webhook-id is missing', 'missing_header', 'webhook-id', () => ({ rawBody: BODY, headers: { ...standard(), 'webhook-id': '' } })],
    ['the timestamp is in milliseconds', 'malformed_timestamp', 'webhook-timestamp', () => ({ rawBody: BODY, headers: standard(BODY, NOW * 1000) })],
    ['the timestamp is too old', 'timestamp_too_old', 'webhook-timestamp', () => ({ rawBody: BODY, headers: standard(BODY, NOW - WEBHOOK_TOLERANCE_SECONDS - 1) })],
    ['webhook-id is not the body\'s id', 'id_mismatch', 'webhook-id', () => ({ rawBody: BODY, headers: standard(BODY, NOW, STANDARD_SECRET, 'evt_other') })],
  ])('when %s, then it is refused (%s, naming %s)', (_what, reason, header, make) => {
    const error = refusal(() => verifyWebhook({ ...make(), secret: STANDARD_SECRET, now: NOW, scheme: 'standard' }));
    expect(error.reason).toBe(reason);
    expect(error.header).toBe(header);
  });
});
