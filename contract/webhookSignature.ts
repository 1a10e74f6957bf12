// The one implementation of the webhook signature scheme (WH-SIGNATURE, service
// interface §6.4), beside the contract: the server's dispatcher signs with it, the
// client's verifier and the conformance runner check with it, so sender and receivers
// can never disagree about what is signed.
import { createHmac } from 'node:crypto';

/** Carries the stable event ID, equal to the body's `id` (WH-EVENT-ID). */
export const WEBHOOK_EVENT_ID_HEADER = 'X-Service-Event-Id';
/** Unix time in whole seconds when the attempt was signed (WH-TIMESTAMP). */
export const WEBHOOK_TIMESTAMP_HEADER = 'X-Service-Timestamp';
/** `v1=` + lowercase hex HMAC-SHA256 of `${timestamp}.${rawBody}` (WH-SIGNATURE). */
export const WEBHOOK_SIGNATURE_HEADER = 'X-Service-Signature';

/** The scheme prefix; a future scheme would get its own prefix (`v2=`). */
export const WEBHOOK_SIGNATURE_PREFIX = 'v1=';

/**
 * How far X-Service-Timestamp may be from the receiver's clock, in either direction.
 * The contract's ND-TIMESTAMP-AGE decision: five minutes absorbs clock skew and
 * queueing while keeping the replay window short.
 */
export const WEBHOOK_TOLERANCE_SECONDS = 300;

/**
 * Signs one delivery attempt: `v1=` + lowercase hex HMAC-SHA256, keyed with the
 * signing secret, of the timestamp, a dot, and the exact bytes of the body.
 * A Buffer body is signed byte for byte, never decoded and re-encoded. Its type says
 * Uint8Array (which a Buffer is) so that the client's declarations need no Node types.
 */
export function signWebhook(secret: string, timestamp: number, rawBody: string | Uint8Array): string {
  if (!Number.isSafeInteger(timestamp) || timestamp < 0) {
    throw new RangeError(`timestamp must be a non-negative integer number of seconds, got ${timestamp}`);
  }
  const hmac = createHmac('sha256', secret);
  hmac.update(`${timestamp}.`, 'utf8');
  hmac.update(typeof rawBody === 'string' ? Buffer.from(rawBody, 'utf8') : rawBody);
  return WEBHOOK_SIGNATURE_PREFIX + hmac.digest('hex');
}

// Standard Webhooks (standardwebhooks.com), the scheme OpenAI and Replicate sign with: an
// account may opt in to receive its three headers as well (ND-STANDARD-WEBHOOKS). The
// X-Service-* headers above are sent either way and never change; these sign the same
// bytes with the same secret, so a receiver may check either.

/** The event ID, the same on every attempt (equal to X-Service-Event-Id and the body's `id`). */
export const STANDARD_WEBHOOK_ID_HEADER = 'webhook-id';
/** Unix time in whole seconds when the attempt was signed (equal to X-Service-Timestamp). */
export const STANDARD_WEBHOOK_TIMESTAMP_HEADER = 'webhook-timestamp';
/** Space-separated `v1,<base64 HMAC-SHA256>` signatures of `${id}.${timestamp}.${rawBody}`. */
export const STANDARD_WEBHOOK_SIGNATURE_HEADER = 'webhook-signature';
/** The scheme's version prefix in webhook-signature. */
export const STANDARD_WEBHOOK_SIGNATURE_PREFIX = 'v1,';
/** The scheme's secrets are `whsec_` + the key's bytes in base64. */
export const STANDARD_WEBHOOK_SECRET_PREFIX = 'whsec_';

/**
 * How many random bytes a signing secret carries: 192 bits, and a multiple of three, so
 * its base64 has no padding to lose when a secret is pasted.
 */
export const SIGNING_SECRET_BYTES = 24;

/** Base64 in either alphabet, padding optional: secrets made before the standard alphabet are URL-safe. */
const BASE64_KEY = /^[A-Za-z0-9+/_-]+={0,2}$/;

/**
 * Standard base64 exactly as the scheme's libraries decode it (standardwebhooks and svix on
 * npm, through @stablelib/base64): only `A-Z a-z 0-9 + /`, padded to a multiple of four.
 * Their constructors throw on anything else, so a secret of another form fails before a
 * single delivery is verified.
 */
const LIBRARY_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{4}|[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)$/;

/**
 * A signing secret for the key bytes, as the service makes every new one: `whsec_` and
 * the key in standard base64, which the Standard Webhooks libraries take as printed
 * and the service's own scheme uses as text.
 */
export function signingSecretOf(key: Uint8Array): string {
  return STANDARD_WEBHOOK_SECRET_PREFIX + Buffer.from(key).toString('base64');
}

/**
 * Whether the Standard Webhooks libraries take the secret exactly as written. A secret
 * made before secrets were standard base64 is URL-safe, and one with `-` or `_` in it
 * is refused by them; standardWebhookSecret writes its key in the form they take.
 */
export function librariesTakeSecret(secret: string): boolean {
  return secret.startsWith(STANDARD_WEBHOOK_SECRET_PREFIX) && LIBRARY_BASE64.test(secret.slice(STANDARD_WEBHOOK_SECRET_PREFIX.length));
}

/**
 * The HMAC key of a secret under Standard Webhooks: the bytes that the base64 after
 * `whsec_` encodes, as the scheme's libraries derive it. New secrets are standard
 * base64; those made before are URL-safe, whose `-` and `_` stand for `+` and `/`, so
 * an old secret's key is the bytes it always encoded and what its receivers verify never
 * changes. A secret that is not of that form (no prefix, or not base64 after it) is used
 * as its UTF-8 bytes, so every secret signs under both schemes.
 */
export function standardWebhookKey(secret: string): Uint8Array {
  const encoded = secret.startsWith(STANDARD_WEBHOOK_SECRET_PREFIX) ? secret.slice(STANDARD_WEBHOOK_SECRET_PREFIX.length) : undefined;
  if (encoded !== undefined && BASE64_KEY.test(encoded) && encoded.replace(/=+$/, '').length % 4 !== 1) {
    // Spelled out rather than left to Node's lenient decoder, so a decoder that reads
    // the standard alphabet alone (a page's atob) derives the same key.
    const key = Buffer.from(encoded.replaceAll('-', '+').replaceAll('_', '/'), 'base64');
    if (key.length > 0) return key;
  }
  return Buffer.from(secret, 'utf8');
}

/**
 * The same key written as Standard Webhooks libraries read it (`whsec_` + standard
 * base64), for a secret made before the service wrote secrets so; a newer secret comes
 * back as it is.
 */
export function standardWebhookSecret(secret: string): string {
  return signingSecretOf(standardWebhookKey(secret));
}

/**
 * Signs one delivery attempt under Standard Webhooks: `v1,` + base64 HMAC-SHA256, keyed
 * with standardWebhookKey(secret), of the event ID, a dot, the timestamp, a dot, and the
 * exact bytes of the body.
 */
export function signStandardWebhook(secret: string, id: string, timestamp: number, rawBody: string | Uint8Array): string {
  if (!Number.isSafeInteger(timestamp) || timestamp < 0) {
    throw new RangeError(`timestamp must be a non-negative integer number of seconds, got ${timestamp}`);
  }
  const hmac = createHmac('sha256', standardWebhookKey(secret));
  hmac.update(`${id}.${timestamp}.`, 'utf8');
  hmac.update(typeof rawBody === 'string' ? Buffer.from(rawBody, 'utf8') : rawBody);
  return STANDARD_WEBHOOK_SIGNATURE_PREFIX + hmac.digest('base64');
}
