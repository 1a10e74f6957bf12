// Receiver side of the webhook scheme (WH-RECEIVER-VERIFY): checks the
// signature over the raw body in constant time, refuses timestamps outside the
// tolerance in either direction (ND-TIMESTAMP-AGE), and returns the parsed event.
// Either scheme: the source's X-Service-* headers, or Standard Webhooks' webhook-*
// headers, which an opted-in account receives as well (ND-STANDARD-WEBHOOKS).
import { timingSafeEqual } from 'node:crypto';
import type { components } from '../../generated/openapi.ts';
import {
  STANDARD_WEBHOOK_ID_HEADER,
  STANDARD_WEBHOOK_SIGNATURE_HEADER,
  STANDARD_WEBHOOK_SIGNATURE_PREFIX,
  STANDARD_WEBHOOK_TIMESTAMP_HEADER,
  WEBHOOK_EVENT_ID_HEADER,
  WEBHOOK_SIGNATURE_HEADER,
  WEBHOOK_SIGNATURE_PREFIX,
  WEBHOOK_TIMESTAMP_HEADER,
  WEBHOOK_TOLERANCE_SECONDS,
  signStandardWebhook,
  signWebhook,
} from '../../contract/webhookSignature.ts';

type Schemas = components['schemas'];
export type AvatarReadyEvent = Schemas['AvatarReadyEvent'];
export type AvatarFailedEvent = Schemas['AvatarFailedEvent'];
export type AvatarVideoReadyEvent = Schemas['AvatarVideoReadyEvent'];
export type AvatarVideoFailedEvent = Schemas['AvatarVideoFailedEvent'];
/** The four events the contract defines (WH-TERMINAL). */
export type KnownWebhookEvent = AvatarReadyEvent | AvatarFailedEvent | AvatarVideoReadyEvent | AvatarVideoFailedEvent;
export type KnownWebhookEventType = KnownWebhookEvent['type'];

declare const unknownEventType: unique symbol;
/**
 * An event type this client does not know yet. Within /v1 new event types may appear
 * (ND-COMPAT), so an authentic event of a new type is returned rather than refused;
 * the brand keeps `event.type === 'avatar.ready'` narrowing to the known shape.
 */
export type UnknownWebhookEventType = string & { readonly [unknownEventType]: true };
export interface UnknownWebhookEvent {
  id: string;
  type: UnknownWebhookEventType;
  data: { object: { id: string; [member: string]: unknown } };
  [member: string]: unknown;
}
export type WebhookEvent = KnownWebhookEvent | UnknownWebhookEvent;

export const KNOWN_WEBHOOK_EVENT_TYPES: readonly KnownWebhookEventType[] = [
  'avatar.ready',
  'avatar.failed',
  'avatar_video.ready',
  'avatar_video.failed',
];

export function isKnownWebhookEvent(event: WebhookEvent): event is KnownWebhookEvent {
  return (KNOWN_WEBHOOK_EVENT_TYPES as readonly string[]).includes(event.type);
}

export type WebhookVerificationReason =
  | 'missing_header'
  | 'malformed_timestamp'
  | 'malformed_signature'
  | 'bad_signature'
  | 'timestamp_too_old'
  | 'timestamp_in_future'
  | 'malformed_body'
  | 'id_mismatch';

/** Why an incoming webhook was refused; `header` names the header at fault, if any. */
export class WebhookVerificationError extends Error {
  readonly reason: WebhookVerificationReason;
  readonly header: string | undefined;
  constructor(reason: WebhookVerificationReason, message: string, header?: string) {
    super(message);
    this.name = 'WebhookVerificationError';
    this.reason = reason;
    this.header = header;
  }
}

/** Fetch `Headers`, or Node's `IncomingHttpHeaders` (lower-case names, maybe arrays). */
export type HeaderSource = Headers | Record<string, string | string[] | undefined>;

export interface VerifyWebhookInput {
  /** The exact bytes received, before any JSON parsing: a string, or a Buffer or other Uint8Array. */
  rawBody: string | Uint8Array;
  headers: HeaderSource;
  /** The integration's signing secret (`whsec_…`). */
  secret: string;
  /** Defaults to WEBHOOK_TOLERANCE_SECONDS (300). */
  toleranceSeconds?: number;
  /** The receiver's clock as Unix seconds; defaults to the system clock. */
  now?: number;
  /**
   * Which headers to verify: `service` (X-Service-*), `standard` (webhook-*, Standard
   * Webhooks), or `either` (the default): X-Service-* when the delivery has
   * X-Service-Signature, else webhook-* when it has webhook-signature.
   */
  scheme?: WebhookScheme;
}

export type WebhookScheme = 'service' | 'standard' | 'either';

export function readHeader(headers: HeaderSource, name: string): string | undefined {
  if (isHeaders(headers)) return headers.get(name) ?? undefined;
  const wanted = name.toLowerCase();
  for (const [key, value] of Object.entries(headers as Record<string, string | string[] | undefined>)) {
    if (key.toLowerCase() !== wanted || value === undefined) continue;
    // A repeated header is ambiguous; the first value is the one a proxy keeps.
    return Array.isArray(value) ? value[0] : value;
  }
  return undefined;
}

const TIMESTAMP_PATTERN = /^[0-9]{1,12}$/;
const SIGNATURE_PATTERN = /^v1=[0-9a-f]{64}$/;

/**
 * Verifies one delivery and returns its event. Throws WebhookVerificationError when a
 * header is missing or malformed, the signature does not match the raw body, the
 * timestamp is outside the tolerance (in the past or the future), the body is not an
 * event, or the body's `id` differs from X-Service-Event-Id.
 */
export function verifyWebhook(input: VerifyWebhookInput): WebhookEvent {
  const scheme = input.scheme ?? 'either';
  const standard =
    scheme === 'standard' ||
    (scheme === 'either' && readHeader(input.headers, WEBHOOK_SIGNATURE_HEADER) === undefined && readHeader(input.headers, STANDARD_WEBHOOK_SIGNATURE_HEADER) !== undefined);
  return standard ? verifyStandardWebhook(input) : verifyServiceWebhook(input);
}

function verifyServiceWebhook(input: VerifyWebhookInput): WebhookEvent {
  const { headers, secret } = input;
  const toleranceSeconds = input.toleranceSeconds ?? WEBHOOK_TOLERANCE_SECONDS;
  const nowSeconds = input.now ?? Math.floor(Date.now() / 1000);
  const rawBody = typeof input.rawBody === 'string' ? Buffer.from(input.rawBody, 'utf8') : Buffer.from(input.rawBody);

  const eventId = required(headers, WEBHOOK_EVENT_ID_HEADER);
  const timestampText = required(headers, WEBHOOK_TIMESTAMP_HEADER);
  const signature = required(headers, WEBHOOK_SIGNATURE_HEADER).trim();

  if (!TIMESTAMP_PATTERN.test(timestampText.trim())) {
    throw new WebhookVerificationError(
      'malformed_timestamp',
      `${WEBHOOK_TIMESTAMP_HEADER} must be Unix time in whole seconds, got ${JSON.stringify(timestampText)}`,
      WEBHOOK_TIMESTAMP_HEADER,
    );
  }
  const timestamp = Number(timestampText.trim());
  if (!SIGNATURE_PATTERN.test(signature)) {
    throw new WebhookVerificationError(
      'malformed_signature',
      `${WEBHOOK_SIGNATURE_HEADER} must be ${WEBHOOK_SIGNATURE_PREFIX} followed by 64 lowercase hex digits`,
      WEBHOOK_SIGNATURE_HEADER,
    );
  }

  const expected = Buffer.from(signWebhook(secret, timestamp, rawBody), 'utf8');
  const received = Buffer.from(signature, 'utf8');
  // Both are 67 ASCII bytes here (the pattern above fixed the length), so the
  // constant-time compare never throws and never short-circuits.
  if (expected.length !== received.length || !timingSafeEqual(expected, received)) {
    throw new WebhookVerificationError(
      'bad_signature',
      `${WEBHOOK_SIGNATURE_HEADER} does not match the body: wrong secret, or the body was changed (re-serialised JSON counts as changed)`,
      WEBHOOK_SIGNATURE_HEADER,
    );
  }

  return freshEvent(rawBody, eventId, timestamp, nowSeconds, toleranceSeconds, { timestamp: WEBHOOK_TIMESTAMP_HEADER, id: WEBHOOK_EVENT_ID_HEADER });
}

/** Each `v1,<base64 of 32 bytes>` of webhook-signature; other versions are skipped, as the scheme says. */
const STANDARD_SIGNATURE_PATTERN = /^v1,[A-Za-z0-9+/]{43}=$/;

/**
 * Verifies a delivery under Standard Webhooks: webhook-id, webhook-timestamp and the
 * space-separated signatures of webhook-signature, any one of which may match (a sender
 * rotating its secret signs with both). The same tolerance, body and ID rules as the
 * source's scheme.
 */
function verifyStandardWebhook(input: VerifyWebhookInput): WebhookEvent {
  const { headers, secret } = input;
  const toleranceSeconds = input.toleranceSeconds ?? WEBHOOK_TOLERANCE_SECONDS;
  const nowSeconds = input.now ?? Math.floor(Date.now() / 1000);
  const rawBody = typeof input.rawBody === 'string' ? Buffer.from(input.rawBody, 'utf8') : Buffer.from(input.rawBody);

  const eventId = required(headers, STANDARD_WEBHOOK_ID_HEADER).trim();
  const timestampText = required(headers, STANDARD_WEBHOOK_TIMESTAMP_HEADER).trim();
  const signatures = required(headers, STANDARD_WEBHOOK_SIGNATURE_HEADER).trim().split(/\s+/);

  if (!TIMESTAMP_PATTERN.test(timestampText)) {
    throw new WebhookVerificationError(
      'malformed_timestamp',
      `${STANDARD_WEBHOOK_TIMESTAMP_HEADER} must be Unix time in whole seconds, got ${JSON.stringify(timestampText)}`,
      STANDARD_WEBHOOK_TIMESTAMP_HEADER,
    );
  }
  const timestamp = Number(timestampText);
  const candidates = signatures.filter((s) => STANDARD_SIGNATURE_PATTERN.test(s));
  if (candidates.length === 0) {
    throw new WebhookVerificationError(
      'malformed_signature',
      `${STANDARD_WEBHOOK_SIGNATURE_HEADER} must hold ${STANDARD_WEBHOOK_SIGNATURE_PREFIX} followed by the base64 of 32 bytes`,
      STANDARD_WEBHOOK_SIGNATURE_HEADER,
    );
  }

  const expected = Buffer.from(signStandardWebhook(secret, eventId, timestamp, rawBody), 'utf8');
  // Every candidate is compared, each in constant time and of the pattern's fixed length.
  let matched = false;
  for (const candidate of candidates) {
    const received = Buffer.from(candidate, 'utf8');
    if (expected.length === received.length && timingSafeEqual(expected, received)) matched = true;
  }
  if (!matched) {
    throw new WebhookVerificationError(
      'bad_signature',
      `${STANDARD_WEBHOOK_SIGNATURE_HEADER} does not match the body: wrong secret, or the body was changed (re-serialised JSON counts as changed)`,
      STANDARD_WEBHOOK_SIGNATURE_HEADER,
    );
  }

  return freshEvent(rawBody, eventId, timestamp, nowSeconds, toleranceSeconds, { timestamp: STANDARD_WEBHOOK_TIMESTAMP_HEADER, id: STANDARD_WEBHOOK_ID_HEADER });
}

function required(headers: HeaderSource, name: string): string {
  const value = readHeader(headers, name);
  if (value === undefined || value.trim() === '') {
    throw new WebhookVerificationError('missing_header', `${name} header is missing`, name);
  }
  return value;
}

function parseEvent(rawBody: Buffer): WebhookEvent {
  let body: unknown;
  try {
    body = JSON.parse(rawBody.toString('utf8'));
  } catch {
    throw new WebhookVerificationError('malformed_body', 'the body is not JSON');
  }
  if (!isRecord(body) || typeof body.id !== 'string' || typeof body.type !== 'string') {
    throw new WebhookVerificationError('malformed_body', 'the body is not an event: it needs string members id and type');
  }
  const data = body.data;
  if (!isRecord(data) || !isRecord(data.object) || typeof data.object.id !== 'string') {
    throw new WebhookVerificationError('malformed_body', 'the body is not an event: data.object.id is missing');
  }
  return body as unknown as WebhookEvent;
}

function isHeaders(headers: HeaderSource): headers is Headers {
  return headers instanceof Headers || (typeof headers.get === 'function' && typeof headers.has === 'function');
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * What both schemes require once the signature matched: a timestamp within the tolerance
 * either side of this clock, and a body whose id is the one the headers named. Told by
 * the header names of the scheme that was verified.
 */
function freshEvent(rawBody: Buffer, eventId: string, timestamp: number, nowSeconds: number, toleranceSeconds: number, names: { timestamp: string; id: string }): WebhookEvent {
  if (timestamp < nowSeconds - toleranceSeconds) {
    throw new WebhookVerificationError('timestamp_too_old', `${names.timestamp} is ${nowSeconds - timestamp} s old; at most ${toleranceSeconds} s are accepted`, names.timestamp);
  }
  if (timestamp > nowSeconds + toleranceSeconds) {
    throw new WebhookVerificationError('timestamp_in_future', `${names.timestamp} is ${timestamp - nowSeconds} s ahead of this clock; at most ${toleranceSeconds} s are accepted`, names.timestamp);
  }
  const event = parseEvent(rawBody);
  if (event.id !== eventId) {
    throw new WebhookVerificationError('id_mismatch', `${names.id} is ${eventId} but the body's id is ${event.id}`, names.id);
  }
  return event;
}
