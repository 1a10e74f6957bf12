import { LRUCache } from 'lru-cache';
import type { WindowName } from '../../domain/model.ts';
import { WINDOWS, decide, windowStart } from '../../domain/rateLimits.ts';
import type { RateLimitStore } from '../../domain/ports.ts';
import type { AccountVersions } from './accountVersions.ts';
import { transaction, type Db, type Row } from './database.ts';

/** How often counters are written behind to the database. */
export const RATE_COUNTER_FLUSH_MS = 1000;
/** Counters held in memory at most (two per key and bucket counted lately: a few MB). */
export const MAX_KEPT_COUNTERS = 20_000;

interface Counter {
  windowStart: number;
  count: number;
}

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
  const dirty = new Set<string>();
  /** Counters let go with counts not yet written: the next flush writes them. */
  const unwritten = new Map<string, Counter>();
  const counters = new LRUCache<string, Counter>({
    max: options.maxKept ?? MAX_KEPT_COUNTERS,
    dispose: (c, k, reason) => {
      if (reason === 'evict' && dirty.has(k)) unwritten.set(k, c);
    },
  });
  const load = db.prepare('SELECT window_start, count FROM rate_counters WHERE key_id = ? AND bucket = ? AND window = ?');
  const save = db.prepare(`
    INSERT INTO rate_counters (key_id, bucket, window, window_start, count) VALUES (?, ?, ?, ?, ?)
    ON CONFLICT (key_id, bucket, window) DO UPDATE SET window_start = excluded.window_start, count = excluded.count`);

  const id = (keyId: string, bucket: string, w: WindowName) => `${keyId}\u0000${bucket}\u0000${w}`;

  function counter(keyId: string, bucket: string, w: WindowName): Counter {
    const k = id(keyId, bucket, w);
    let c = counters.get(k);
    if (!c) {
      c = unwritten.get(k);
      unwritten.delete(k);
      if (!c) {
        const row = load.get(keyId, bucket, w) as Row | undefined;
        c = { windowStart: row ? Number(row.window_start) : 0, count: row ? Number(row.count) : 0 };
      }
      counters.set(k, c);
    }
    return c;
  }

  function counts(keyId: string, bucket: string, now: number): Record<WindowName, number> {
    const result: Record<WindowName, number> = { minute: 0, day: 0 };
    for (const w of WINDOWS) {
      const c = counter(keyId, bucket, w);
      // A counter from an earlier window is as good as zero.
      if (c.windowStart === windowStart(w, now)) result[w] = c.count;
    }
    return result;
  }

  return {
    /** Counters held in memory. */
    get kept() {
      return counters.size;
    },
    async consume({ keyId, version }, bucket, limits, now) {
      if (version !== versions.current()) return 'stale';
      const decision = decide(limits, counts(keyId, bucket, now), now, true);
      if (decision.allowed) {
        for (const w of WINDOWS) {
          const c = counter(keyId, bucket, w);
          const start = windowStart(w, now);
          if (c.windowStart !== start) Object.assign(c, { windowStart: start, count: 0 });
          c.count += 1;
          dirty.add(id(keyId, bucket, w));
        }
      }
      return decision;
    },
    async peek({ keyId }, bucket, limits, now) {
      return decide(limits, counts(keyId, bucket, now), now, false);
    },
    flush() {
      if (dirty.size === 0 || !db.isOpen) return;
      const batch = [...dirty];
      transaction(db, () => {
        for (const k of batch) {
          const [keyId, bucket, w] = k.split('\u0000') as [string, string, string];
          const c = (counters.peek(k) ?? unwritten.get(k))!;
          save.run(keyId, bucket, w, c.windowStart, c.count);
        }
      });
      // Cleared once written: a failed write keeps them for the next flush.
      dirty.clear();
      unwritten.clear();
    },
  };
}
