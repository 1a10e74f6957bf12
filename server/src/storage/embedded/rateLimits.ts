import type { WindowName } from '../../domain/model.ts';
import { WINDOWS, decide, windowStart } from '../../domain/rateLimits.ts';
import type { RateLimitStore } from '../ports.ts';
import { transaction, type Db, type Row } from './database.ts';

/** Per-key fixed-window counters, kept in the database so they survive a restart. */
export function embeddedRateLimits(db: Db): RateLimitStore {
  const read = db.prepare('SELECT window, window_start, count FROM rate_counters WHERE key_id = ? AND bucket = ?');
  const write = db.prepare(`
    INSERT INTO rate_counters (key_id, bucket, window, window_start, count) VALUES (?, ?, ?, ?, 1)
    ON CONFLICT (key_id, bucket, window) DO UPDATE SET
      count = CASE WHEN window_start = excluded.window_start THEN count + 1 ELSE 1 END,
      window_start = excluded.window_start`);

  function counts(keyId: string, bucket: string, now: number): Record<WindowName, number> {
    const result: Record<WindowName, number> = { minute: 0, day: 0 };
    for (const row of read.all(keyId, bucket) as Row[]) {
      const w = row.window as WindowName;
      // A counter from an earlier window is as good as zero.
      if (Number(row.window_start) === windowStart(w, now)) result[w] = Number(row.count);
    }
    return result;
  }

  return {
    async consume(keyId, bucket, limits, now) {
      return transaction(db, () => {
        const decision = decide(limits, counts(keyId, bucket, now), now, true);
        if (decision.allowed) for (const w of WINDOWS) write.run(keyId, bucket, w, windowStart(w, now));
        return decision;
      });
    },
    async peek(keyId, bucket, limits, now) {
      return decide(limits, counts(keyId, bucket, now), now, false);
    },
  };
}
