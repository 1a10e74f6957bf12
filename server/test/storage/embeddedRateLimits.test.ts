// The embedded store's limiter counts in memory and writes behind; what it keeps in
// memory is the counters of windows still open, not every key it ever counted.
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
  it('lets go of the counters of ended windows, and counts on from the database after', async () => {
    const versions = embeddedAccountVersions(db);
    const limiter = embeddedRateLimits(db, versions);
    const who = (i: number) => ({ keyId: `key_${i}`, accountId: 'acct_1', version: versions.current() });
    for (let i = 0; i < 100; i++) await limiter.consume(who(i), 'read', LIMITS, T);
    await limiter.consume(who(0), 'read', LIMITS, T);
    limiter.flush(T);
    expect(limiter.kept).toBe(200); // a minute and a day counter per key

    limiter.flush(T + 61_000); // the minute windows have ended, the day windows not
    const later = await limiter.consume(who(0), 'read', LIMITS, T + 61_000);

    expect(limiter.kept).toBe(101);
    expect(later).toMatchObject({ allowed: true });
    expect(later !== 'stale' && later.windows.find((w) => w.window === 'day')!.remaining).toBe(47);
  });
});
