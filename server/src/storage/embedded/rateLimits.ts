import { LRUCache } from 'lru-cache';
import type { WindowName } from '../../domain/model.ts';
import { WINDOWS, decide, windowStart } from '../../domain/rateLimits.ts';
import type { RateLimitStore } from '../../domain/ports.ts';
import type { AccountVersions } from './accountVersions.ts';
import { transaction, type Db, type Row } from './database.ts';

/** How often counters are written behind to the database. */
export const RATE_COUNTER_FLUSH_MS = 1000;
/** Keys and buckets whose counters are held in memory at most (those counted lately: a few MB). */
export const MAX_KEPT_COUNTERS = 10_000;

interface Counter {
  windowStart: number;
  count: number;
}

/** A key's counters of one bucket, one a window: what a request reads and counts, kept together. */
type Counters = Record<WindowName, Counter>;

/**
 * Per-key fixed-window counters. The embedded store serves one process, so the counts
 * live in memory, where counting is a map update on the event loop, and are written
 * behind to the database every second and on close, so that they survive a restart.
 * A crash loses at most the last second of counts, which can only favour the client.
 * Memory holds the counters used most recently, up to a fixed number whatever the number
 * of keys: a counter let go is read back from the database when its key comes again, and
 * one let go before it was written waits for the next write where a read finds it.
 */
export function embeddedRateLimits(
  db: Db,
  versions: AccountVersions,
  options: { maxKept?: number } = {},
): RateLimitStore & { flush(): void; readonly kept: number } {
  /** Keys and buckets counted since the last write, as `keyId\u0000bucket`. */
  const dirty = new Set<string>();
  /** Counters let go with counts not yet written: the next flush writes them. */
  const unwritten = new Map<string, Counters>();
  const kept = new LRUCache<string, Counters>({
    max: options.maxKept ?? MAX_KEPT_COUNTERS,
    dispose: (c, k, reason) => {
      if (reason === 'evict' && dirty.has(k)) unwritten.set(k, c);
    },
  });
  const load = db.prepare('SELECT window, window_start, count FROM rate_counters WHERE key_id = ? AND bucket = ?');
  const save = db.prepare(`
    INSERT INTO rate_counters (key_id, bucket, window, window_start, count) VALUES (?, ?, ?, ?, ?)
    ON CONFLICT (key_id, bucket, window) DO UPDATE SET window_start = excluded.window_start, count = excluded.count`);

  const id = (keyId: string, bucket: string) => `${keyId}\u0000${bucket}`;

  function countersOf(k: string, keyId: string, bucket: string): Counters {
    let c = kept.get(k);
    if (!c) {
      c = unwritten.get(k);
      unwritten.delete(k);
      if (!c) {
        c = { minute: { windowStart: 0, count: 0 }, day: { windowStart: 0, count: 0 } };
        for (const row of load.all(keyId, bucket) as Row[]) {
          const w = row.window as WindowName;
          if (c[w]) c[w] = { windowStart: Number(row.window_start), count: Number(row.count) };
        }
      }
      kept.set(k, c);
    }
    return c;
  }

  function counts(c: Counters, now: number): Record<WindowName, number> {
    const result: Record<WindowName, number> = { minute: 0, day: 0 };
    // A counter from an earlier window is as good as zero.
    for (const w of WINDOWS) if (c[w].windowStart === windowStart(w, now)) result[w] = c[w].count;
    return result;
  }

  return {
    /** Keys and buckets whose counters are held in memory. */
    get kept() {
      return kept.size;
    },
    async consume({ keyId, version }, bucket, limits, now) {
      if (version !== null && version !== versions.current()) return 'stale';
      const k = id(keyId, bucket);
      const c = countersOf(k, keyId, bucket);
      const decision = decide(limits, counts(c, now), now, true);
      if (decision.allowed) {
        for (const w of WINDOWS) {
          const start = windowStart(w, now);
          if (c[w].windowStart !== start) c[w] = { windowStart: start, count: 0 };
          c[w].count += 1;
        }
        dirty.add(k);
      }
      return decision;
    },
    async peek({ keyId }, bucket, limits, now) {
      return decide(limits, counts(countersOf(id(keyId, bucket), keyId, bucket), now), now, false);
    },
    flush() {
      if (dirty.size === 0 || !db.isOpen) return;
      const batch = [...dirty];
      transaction(db, () => {
        for (const k of batch) {
          const [keyId, bucket] = k.split('\u0000') as [string, string];
          const c = (kept.peek(k) ?? unwritten.get(k))!;
          for (const w of WINDOWS) save.run(keyId, bucket, w, c[w].windowStart, c[w].count);
        }
      });
      // Cleared once written: a failed write keeps them for the next flush.
      dirty.clear();
      unwritten.clear();
    },
  };
}
