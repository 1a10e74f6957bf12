import { hash, randomBytes } from 'node:crypto';
import { SIGNING_SECRET_BYTES, signingSecretOf } from '../../../contract/webhookSignature.ts';
import type { KeyMode } from './model.ts';

const KEY_PREFIX: Record<KeyMode, string> = { sandbox: 'sk_test_', live: 'sk_live_' };
/** Characters of a key shown back to its owner (GET /v1/me, admin listings). */
export const KEY_DISPLAY_LENGTH = 12;

export function generateApiKey(mode: KeyMode): string {
  return KEY_PREFIX[mode] + randomBytes(24).toString('base64url');
}

/**
 * Keys carry 192 random bits, so a plain SHA-256 is enough to store them safely: a slow
 * password hash protects low-entropy secrets and would cost every request dearly.
 */
export function hashApiKey(key: string): string {
  // The one-shot form: a third of createHash's time, which builds a Hash object per request.
  return hash('sha256', key, 'hex');
}

/**
 * In standard base64, as Standard Webhooks writes secrets, so that its libraries take it
 * exactly as printed; the service's own scheme keys with the text, whichever alphabet.
 */
export function generateSigningSecret(): string {
  return signingSecretOf(randomBytes(SIGNING_SECRET_BYTES));
}
