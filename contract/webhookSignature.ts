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
