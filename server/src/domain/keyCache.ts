import { LRUCache } from 'lru-cache';
import type { KeyRecord } from './ports.ts';

/**
 * The key records this process keeps between requests, by key hash, so that a request
 * with a known key goes to the store only to be counted. A record is right as long as its
 * account's version is: the count refuses a stale one (RateLimitStore.consume) and
 * admission reads the key again, so a revoked key is refused on its very next request,
 * whichever process revoked it. Unknown keys are never kept (a stream of made-up keys
 * would push out the real ones). Bounded in number, the least recently used going first,
 * and in age, a backstop for a version that failed to move (see the stores' versions).
 */
export interface KeyCache {
  get(hash: string): KeyRecord | undefined;
  set(hash: string, record: KeyRecord): void;
  delete(hash: string): void;
  /** Notes that the key's count refused it until `until` (service time). */
  refusedUntil(hash: string, until: number): void;
  /** Whether the key was refused and its window has not reopened by `now`. */
  refusing(hash: string, now: number): boolean;
}

export interface KeyCacheOptions {
  /** Records kept at most (default 10,000: a few MB). */
  max?: number;
  /** How long a record is kept at most (default 60 s). */
  ttlMs?: number;
}

interface Kept {
  record: KeyRecord;
  refusedUntil: number;
}

export function createKeyCache(options: KeyCacheOptions = {}): KeyCache {
  const kept = new LRUCache<string, Kept>({ max: options.max ?? 10_000, ttl: options.ttlMs ?? 60_000, ttlAutopurge: false });
  return {
    get: (hash) => kept.get(hash)?.record,
    set: (hash, record) => void kept.set(hash, { record, refusedUntil: 0 }),
    delete: (hash) => void kept.delete(hash),
    refusedUntil(hash, until) {
      const entry = kept.get(hash);
      if (entry) entry.refusedUntil = until;
    },
    refusing: (hash, now) => (kept.get(hash)?.refusedUntil ?? 0) > now,
  };
}
