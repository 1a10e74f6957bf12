// The embedded store's limiter counts in memory and writes behind; what it keeps in
// memory is a bounded number of counters, not one per key it ever counted.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { embeddedAccountVersions } from '../../src/storage/embedded/accountVersions.ts';
import { openDatabase, type Db } from '../../src/storage/embedded/database.ts';
import { embeddedRateLimits } from '../../src/storage/embedded/rateLimits.ts';

const LIMITS = { minute: 5, day: 50 };
const T = Date.UTC(2026, 10, 2, 9, 0, 30);
let db: Db;

beforeEach(() => {
  db = openDatabase(':memory:');
});
afterEach(() => db.close());

describe('the embedded limiter', () => {
  it('keeps a bounded number of counters, and counts on from what it let go', async () => {
    const versions = embeddedAccountVersions(db, { server: true });
    const limiter = embeddedRateLimits(db, versions, { maxKept: 50 });
    const who = (i: number) => ({ keyId: `key_${i}`, accountId: 'acct_1', version: versions.current() });
    for (let i = 0; i < 3; i++) await limiter.consume(who(0), 'read', LIMITS, T);

    for (let i = 1; i <= 100; i++) await limiter.consume(who(i), 'read', LIMITS, T); // key_0 is let go, unwritten
    const beforeWrite = await limiter.consume(who(0), 'read', LIMITS, T);
    for (let i = 101; i <= 200; i++) await limiter.consume(who(i), 'read', LIMITS, T);
    limiter.flush(); // key_0's counters written, and let go again below
    for (let i = 201; i <= 300; i++) await limiter.consume(who(i), 'read', LIMITS, T);
    const afterWrite = await limiter.consume(who(0), 'read', LIMITS, T);

    expect(limiter.kept).toBe(50);
    const remaining = (d: typeof afterWrite) => (d === 'stale' ? d : d.windows.map((w) => [w.window, w.remaining]));
    expect(remaining(beforeWrite)).toEqual([['minute', 1], ['day', 46]]);
    expect(remaining(afterWrite)).toEqual([['minute', 0], ['day', 45]]);
  });

  it('writes the counters it let go before their write, so a restart counts on from them', async () => {
    const versions = embeddedAccountVersions(db, { server: true });
    const limiter = embeddedRateLimits(db, versions, { maxKept: 10 });
    const who = (i: number) => ({ keyId: `key_${i}`, accountId: 'acct_1', version: versions.current() });
    for (let i = 0; i < 4; i++) await limiter.consume(who(0), 'read', LIMITS, T);
    for (let i = 1; i <= 20; i++) await limiter.consume(who(i), 'read', LIMITS, T);

    limiter.flush();
    const restarted = embeddedRateLimits(db, versions, { maxKept: 10 });
    const next = await restarted.consume(who(0), 'read', LIMITS, T);

    expect(next !== 'stale' && next.windows.find((w) => w.window === 'minute')!.remaining).toBe(0);
  });
});
