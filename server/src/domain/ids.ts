import { randomBytes, createHash } from 'node:crypto';

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';

/** 24 random characters of [a-z0-9] (~124 bits): the tail of every resource ID. */
export function randomSuffix(length = 24): string {
  const bytes = randomBytes(length);
  let out = '';
  // 252 is the largest multiple of 36 below 256; bytes above it are redrawn to keep the draw uniform.
  for (let i = 0; out.length < length; i++) {
    const byte = i < bytes.length ? bytes[i]! : randomBytes(1)[0]!;
    if (byte < 252) out += ALPHABET[byte % 36];
  }
  return out;
}

/** Width of a job ID's time part: base-36 milliseconds since 1970 fit nine digits until the year 5188. */
const TIME_DIGITS = 9;

/**
 * The start of a job ID: when it was made, in fixed-width base 36, so that IDs made later
 * sort after those made before. A store's index on the ID then takes each new job at its
 * end, on pages already in memory, rather than on a page anywhere in it: with a million
 * jobs behind it, an index of random IDs dirtied a page of its own per insert and halved
 * the rate of creates. Service time (not an account's sandbox clock), because only the
 * order of writes matters here. The random tail stays whole: a job's file link carries no
 * key, so its ID is what keeps it from being guessed.
 */
export function timeOrderedPrefix(now: number = Date.now()): string {
  return now.toString(36).padStart(TIME_DIGITS, '0');
}

export const newAvatarId = () => `av_${timeOrderedPrefix()}${randomSuffix()}`;
export const newVideoId = () => `vid_${timeOrderedPrefix()}${randomSuffix()}`;

// The time part is optional: IDs made before it are all random and stay valid.
const JOB_ID = { avatar: /^av_(?:[a-z0-9]{9})?[a-z0-9]{24}$/, avatar_video: /^vid_(?:[a-z0-9]{9})?[a-z0-9]{24}$/ } as const;

/** Whether `id` has the shape of an ID this service makes for a job of `kind`; no other can exist. */
export const isJobId = (kind: keyof typeof JOB_ID, id: string): boolean => JOB_ID[kind].test(id);
export const newAccountId = () => `acct_${randomSuffix()}`;
export const newKeyId = () => `key_${randomSuffix()}`;

/**
 * The event ID is a function of the resource and the event type, so every retry and
 * every duplicate of one event carries the same X-Service-Event-Id (WH-EVENT-ID).
 */
export function eventIdFor(resourceId: string, eventType: string): string {
  return `evt_${createHash('sha256').update(`${resourceId}:${eventType}`).digest('hex').slice(0, 32)}`;
}

/** Whether `id` has the shape of an event ID this service makes; no other can exist. */
export const isEventId = (id: string): boolean => /^evt_[0-9a-f]{32}$/.test(id);
