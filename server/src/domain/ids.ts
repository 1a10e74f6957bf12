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

export const newAvatarId = () => `av_${randomSuffix()}`;
export const newVideoId = () => `vid_${randomSuffix()}`;

const JOB_ID = { avatar: /^av_[a-z0-9]{24}$/, avatar_video: /^vid_[a-z0-9]{24}$/ } as const;

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
