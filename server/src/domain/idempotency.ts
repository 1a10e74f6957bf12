// Idempotency keys on the creates (ND-IDEMPOTENCY): what a key may be, what makes two
// requests "the same", and how a kept key answers. The key is stored with the job it
// created, by the store, in that job's transaction; here is only what the rule says.
import { createHash } from 'node:crypto';
import { stringify as canonicalJson } from 'safe-stable-stringify';
import { sharedParameter } from '../../../contract/operations.ts';
import type { DomainDeps } from './deps.ts';
import { DomainError, validationFailed } from './errors.ts';
import type { IdempotencyClaim, IdempotentRequest } from './ports.ts';

/** How long a key that created a job is kept, in account time. */
export const IDEMPOTENCY_KEY_TTL_MS = 24 * 60 * 60 * 1000;

const HEADER = 'Idempotency-Key';
/** What a key may be (1 to 255 visible ASCII characters), as the contract's parameter states it. */
const KEY_SCHEMA = sharedParameter('header', HEADER).schema as { minLength: number; maxLength: number; pattern: string };
const KEY_PATTERN = new RegExp(KEY_SCHEMA.pattern, 'u');

/** A create request as an idempotency key binds it: the operation and its body. */
export interface IdempotentCreate {
  key: string;
  fingerprint: string;
}

/** The answer a kept key replays: the first 202's body, and where it points. */
export interface Replay<T> {
  record: T;
  replayed: true;
}

/** The header's value, checked; undefined when the request has none. */
export function readIdempotencyKey(value: string | string[] | undefined): string | undefined {
  if (value === undefined) return undefined;
  const key = Array.isArray(value) ? value.join(',') : value;
  const rule = key.length < KEY_SCHEMA.minLength ? 'minLength' : key.length > KEY_SCHEMA.maxLength ? 'maxLength' : KEY_PATTERN.test(key) ? undefined : 'pattern';
  if (rule) {
    // The header, not the body, broke the rule: the detail says so (the field names it too).
    throw validationFailed(
      [{ field: HEADER, rule, message: `must be ${KEY_SCHEMA.minLength} to ${KEY_SCHEMA.maxLength} visible ASCII characters, the same on every retry of one request` }],
      `The ${HEADER} header`,
    );
  }
  return key;
}

/**
 * The request a key is bound to. Members in any order are the same body: the body is
 * hashed as canonical JSON (keys sorted), with the operation in front, so a key sent
 * first to one create and then to the other is "another request".
 */
export function idempotentCreate(key: string, operation: 'createAvatar' | 'createAvatarVideo', body: unknown): IdempotentCreate {
  return { key, fingerprint: createHash('sha256').update(`${operation}\n${canonicalJson(body)}`).digest('hex') };
}

export function claimFor(request: IdempotentCreate, response: unknown, now: number): IdempotencyClaim {
  return { key: request.key, fingerprint: request.fingerprint, response: JSON.stringify(response), expiresAt: now + IDEMPOTENCY_KEY_TTL_MS };
}

/** The first answer again, when the kept key was used for this very request; 409 when for another. */
export function replayOf<T>(request: IdempotentCreate, kept: IdempotentRequest): Replay<T> {
  if (kept.fingerprint !== request.fingerprint) {
    throw new DomainError(
      'idempotency_key_reused',
      `The ${HEADER} ${request.key} was used with another request body; send a new key for a new request.`,
      [{ field: HEADER, rule: 'same_request', message: 'was used with another request body in the last 24 hours' }],
    );
  }
  return { record: JSON.parse(kept.response) as T, replayed: true };
}

/** The kept key's answer, if the account has this key; checked before any work, so a replay costs one read. */
export async function findReplay<T>(deps: DomainDeps, accountId: string, request: IdempotentCreate, now: number): Promise<Replay<T> | undefined> {
  const kept = await deps.store.jobs.findIdempotentRequest(accountId, request.key, now);
  return kept ? replayOf<T>(request, kept) : undefined;
}
