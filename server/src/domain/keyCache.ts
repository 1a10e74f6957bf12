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
}

export interface KeyCacheOptions {
  /** Records kept at most (default 10,000: a few MB). */
  max?: number;
  /** How long a record is kept at most (default 60 s). */
  ttlMs?: number;
}

export function createKeyCache(options: KeyCacheOptions = {}): KeyCache {
  const records = new LRUCache<string, KeyRecord>({ max: options.max ?? 10_000, ttl: options.ttlMs ?? 60_000, ttlAutopurge: false });
  return {
    get: (hash) => records.get(hash),
    set: (hash, record) => void records.set(hash, record),
    delete: (hash) => void records.delete(hash),
  };
}
