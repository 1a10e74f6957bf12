// The job store behind the port, on whichever adapter the project runs (embedded or
// PostgreSQL): one worker per job, leases that expire, the outbox in the same transaction.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { createAccount } from '../../src/domain/accounts.ts';
import type { AttemptLog, Job } from '../../src/domain/model.ts';
import { destinationOf } from '../../src/domain/webhookDestinations.ts';
import { MAX_KEPT_ATTEMPTS } from '../../src/domain/webhookLog.ts';
import { openStore } from '../../src/runtime.ts';
import type { Store } from '../../src/domain/ports.ts';
import { fakeClock } from '../support/clock.ts';
import { createTestStoreEnv, type TestStoreEnv } from '../support/stores.ts';

let storeEnv: TestStoreEnv;
let store: Store;
const clock = fakeClock();

beforeEach(async () => {
  storeEnv = await createTestStoreEnv();
  store = await openStore(loadConfig(storeEnv.env), { serving: false });
});
afterEach(async () => {
  await store.close();
  await storeEnv.drop();
});

async function queued(id: string, credits = 10): Promise<Job> {
  const accounts = await store.accounts.listAccounts();
  const accountId = accounts[0]?.id ?? (await createAccount(store, clock, { monthlyCredits: 1000 })).account_id;
  const now = clock.now();
  const job: Job = {
    id, kind: 'avatar', accountId, keyId: 'key_x', sandbox: true, status: 'queued', input: { type: 'prompt', name: 'x', prompt: 'y' },
    webhookUrl: null, credits, period: '2026-11', error: null, result: null, createdAt: now, updatedAt: now, completedAt: null, attempts: 0,
  };
  const outcome = await store.jobs.createJobReservingCredits(job, job.createdAt);
  expect(outcome.ok).toBe(true);
  return job;
}

/** A queued job of `accountId`, a millisecond after the one before. */
async function queuedOf(id: string, accountId: string, kind: Job['kind']): Promise<void> {
  clock.advance(1);
  const now = clock.now();
  const input = kind === 'avatar' ? { type: 'prompt', name: 'x', prompt: 'y' } : { avatar_id: 'av_x', script: 'Hi.', aspect_ratio: '9:16' };
  const outcome = await store.jobs.createJobReservingCredits({
    id, kind, accountId, keyId: 'key_x', sandbox: true, status: 'queued', input, webhookUrl: null, credits: 10, period: '2026-11',
    error: null, result: null, createdAt: now, updatedAt: now, completedAt: null, attempts: 0,
  } as Job, now);
  expect(outcome.ok).toBe(true);
}

describe('claimJob', () => {
  it('hands each job to one worker only', async () => {
    await queued('av_1');
    const now = clock.now();

    const a = await store.jobs.claimJob('w1', now, now + 1000);
    const b = await store.jobs.claimJob('w2', now, now + 1000);

    expect(a?.id).toBe('av_1');
    expect(a?.status).toBe('processing');
    expect(b).toBeNull();
  });

  it('retakes a job whose lease expired, counting the attempt', async () => {
    await queued('av_1');
    const now = clock.now();
    await store.jobs.claimJob('w1', now, now + 1000);

    const retaken = await store.jobs.claimJob('w2', now + 1001, now + 2001);

    expect(retaken).toMatchObject({ id: 'av_1', attempts: 2 });
    expect(await store.jobs.renewLease('av_1', 'w1', now + 5000)).toBe(false);
  });

  it("passes over the videos of the accounts it is told to skip, taking their avatars and another account's video", async () => {
    const busy = (await createAccount(store, clock, { monthlyCredits: 1000 })).account_id;
    const other = (await createAccount(store, clock, { monthlyCredits: 1000 })).account_id;
    await queuedOf('vid_busy1', busy, 'avatar_video');
    await queuedOf('vid_busy2', busy, 'avatar_video');
    await queuedOf('av_busy', busy, 'avatar');
    await queuedOf('vid_other', other, 'avatar_video');
    const claim = () => store.jobs.claimJob('w', clock.now(), clock.now() + 1000, [busy]);

    expect([(await claim())?.id, (await claim())?.id, await claim()]).toEqual(['av_busy', 'vid_other', null]);
    expect((await store.jobs.claimJob('w', clock.now(), clock.now() + 1000))?.id).toBe('vid_busy1');
  });

  it('serves the oldest job first', async () => {
    await queued('av_old');
    clock.advance(1);
    await queued('av_new');

    expect((await store.jobs.claimJob('w', clock.now(), clock.now() + 10))?.id).toBe('av_old');
  });
});

describe('claimJobs', () => {

  it('claims up to the limit in the order queued, one video of an account at most and none of the accounts skipped', async () => {
    const one = (await createAccount(store, clock, { monthlyCredits: 1000 })).account_id;
    const two = (await createAccount(store, clock, { monthlyCredits: 1000 })).account_id;
    const skipped = (await createAccount(store, clock, { monthlyCredits: 1000 })).account_id;
    await queuedOf('vid_skipped', skipped, 'avatar_video');
    await queuedOf('vid_one1', one, 'avatar_video');
    await queuedOf('av_one', one, 'avatar');
    await queuedOf('vid_one2', one, 'avatar_video');
    await queuedOf('av_skipped', skipped, 'avatar');
    await queuedOf('vid_two', two, 'avatar_video');
    await queuedOf('av_two', two, 'avatar');
    const now = clock.now();

    // A store may answer fewer than the limit (a second video of an account among the
    // first runnable jobs is left for the next claim), so the worker claims until none is left.
    const claims: Job[][] = [];
    for (let batch = await store.jobs.claimJobs('w', now, now + 1000, 4, [skipped]); batch.length > 0; batch = await store.jobs.claimJobs('w', now, now + 1000, 4, [skipped])) {
      claims.push(batch);
    }

    for (const batch of claims) {
      expect(batch.length).toBeLessThanOrEqual(4);
      expect(batch.filter((j) => j.kind === 'avatar_video').map((j) => j.accountId)).toEqual([...new Set(batch.filter((j) => j.kind === 'avatar_video').map((j) => j.accountId))]);
      expect(batch.every((j) => j.status === 'processing' && j.attempts === 1)).toBe(true);
    }
    // Every runnable job once, each claim in the order queued, the skipped account's video left in the queue.
    const order = ['vid_skipped', 'vid_one1', 'av_one', 'vid_one2', 'av_skipped', 'vid_two', 'av_two'];
    for (const batch of claims) expect(batch.map((j) => order.indexOf(j.id))).toEqual(batch.map((j) => order.indexOf(j.id)).sort((x, y) => x - y));
    expect(claims.flat().map((j) => j.id).sort()).toEqual(order.slice(1).sort());
    expect(claims[0]!.map((j) => j.id).slice(0, 3)).toEqual(['vid_one1', 'av_one', 'av_skipped']);
    // Told no more to skip that account, the worker takes its video.
    expect((await store.jobs.claimJobs('w', now, now + 1000, 4)).map((j) => j.id)).toEqual(['vid_skipped']);
    expect(await store.jobs.countActiveJobs()).toEqual({ queued: 0, processing: 7 });
  });

  it('hands each job to one worker only when workers claim several at once', async () => {
    const accountId = (await createAccount(store, clock, { monthlyCredits: 10_000 })).account_id;
    for (let i = 0; i < 40; i++) await queuedOf(`av_many_${String(i).padStart(2, '0')}`, accountId, 'avatar');
    const now = clock.now();

    const claims = await Promise.all(Array.from({ length: 12 }, (_, i) => store.jobs.claimJobs(`w${i}`, now, now + 1000, 5)));

    const ids = claims.flat().map((j) => j.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.sort()).toEqual(Array.from({ length: 40 }, (_, i) => `av_many_${String(i).padStart(2, '0')}`));
  });
});

describe('claimJob on accounts whose sandbox clocks differ', () => {
  const YEAR_MS = 365 * 86_400_000;

  /** A queued job of a new account whose clock is `aheadMs` ahead, made now on the service's time. */
  async function queuedAhead(id: string, aheadMs: number): Promise<Job> {
    const { account_id: accountId } = await createAccount(store, clock, { monthlyCredits: 1000 });
    if (aheadMs > 0) await store.accounts.advanceClock(accountId, { byMs: aheadMs }, Number.MAX_SAFE_INTEGER);
    const serviceNow = clock.now();
    const job: Job = {
      id, kind: 'avatar', accountId, keyId: 'key_x', sandbox: true, status: 'queued', input: { type: 'prompt', name: 'x', prompt: 'y' },
      webhookUrl: null, credits: 10, period: '2026-11', error: null, result: null, createdAt: serviceNow + aheadMs, updatedAt: serviceNow + aheadMs, completedAt: null, attempts: 0,
    };
    expect((await store.jobs.createJobReservingCredits(job, serviceNow)).ok).toBe(true);
    return job;
  }

  it('serves first the job queued first on the service time, though its account time is a year ahead of the next one\'s', async () => {
    await queuedAhead('av_ahead', YEAR_MS);
    clock.advance(1);
    await queuedAhead('av_behind', 0);

    const first = await store.jobs.claimJob('w', clock.now(), clock.now() + 10);

    expect(first?.id).toBe('av_ahead');
  });

  it('stamps the claim on the account time: updated_at is the claim\'s time plus the account\'s offset, never before created_at', async () => {
    const job = await queuedAhead('av_ahead', 86_400_000);
    clock.advance(5000);

    const claimed = await store.jobs.claimJob('w', clock.now(), clock.now() + 10);

    expect(claimed?.id).toBe(job.id);
    expect(claimed?.updatedAt).toBe(clock.now() + 86_400_000);
    expect(claimed!.updatedAt - claimed!.createdAt).toBe(5000);
  });
});

describe('completeJob', () => {
  it('captures on ready and refuses a second completion', async () => {
    const job = await queued('av_1');

    const first = await store.jobs.completeJob(job.id, { status: 'ready', error: null, result: {}, at: clock.now() }, null);
    const second = await store.jobs.completeJob(job.id, { status: 'failed', error: { code: 'x', message: 'y' }, result: null, at: clock.now() }, null);

    expect([first, second]).toEqual([true, false]);
    expect(await store.jobs.creditBalance(job.accountId, '2026-11')).toMatchObject({ used: 10, reserved: 0 });
  });
});

describe('a reservation the account cannot cover', () => {
  it('creates no job and changes no balance', async () => {
    await queued('av_1', 995);
    const accountId = (await store.accounts.listAccounts())[0]!.id;
    const job: Job = { ...(await store.jobs.getJob('av_1'))!, id: 'av_2', credits: 10 };

    const outcome = await store.jobs.createJobReservingCredits(job, job.createdAt);

    expect(outcome).toMatchObject({ ok: false, balance: { available: 5 } });
    expect(await store.jobs.getJob('av_2')).toBeNull();
    expect(await store.jobs.creditBalance(accountId, '2026-11')).toMatchObject({ reserved: 995 });
  });
});

describe('the outbox', () => {
  it('rolls the state change back with an event that cannot be recorded, so neither exists alone', async () => {
    const job = await queued('av_1');
    const broken = {
      id: 'evt_x', type: 'avatar.ready', jobId: 'av_missing', accountId: job.accountId, url: 'https://h.example/x', destination: 'h.example:443', payload: '{}',
      status: 'pending' as const, attempts: 0, nextAttemptAt: 0, lastError: null, createdAt: 0, deliveredAt: null, replay: false,
    };

    await expect(store.jobs.completeJob(job.id, { status: 'ready', error: null, result: {}, at: clock.now() }, broken)).rejects.toThrow();

    expect((await store.jobs.getJob(job.id))?.status).toBe('queued');
    expect(await store.jobs.creditBalance(job.accountId, '2026-11')).toMatchObject({ reserved: 10, used: 0 });
    expect(await store.outbox.getEvent('evt_x')).toBeNull();
  });

  it('records the event with the terminal state in one step', async () => {
    const job = await queued('av_1');
    const event = {
      id: 'evt_y', type: 'avatar.ready', jobId: job.id, accountId: job.accountId, url: 'https://h.example/x', destination: 'h.example:443', payload: '{"id":"evt_y"}',
      status: 'pending' as const, attempts: 0, nextAttemptAt: 0, lastError: null, createdAt: 0, deliveredAt: null, replay: false,
    };

    await store.jobs.completeJob(job.id, { status: 'ready', error: null, result: {}, at: clock.now() }, event);

    expect(await store.outbox.getEvent('evt_y')).toMatchObject({ status: 'pending', payload: '{"id":"evt_y"}' });
  });
});

describe('a retry scheduled while the sandbox clock moved', () => {
  it('comes as much sooner as the clock moved during the attempt, as the events at rest do', async () => {
    const [inFlight] = await pendingEvents('a', 'https://a.example/hook', 1, 1000);
    const [atRest] = await pendingEvents('b', 'https://b.example/hook', 1, 10_000);
    const { accountId } = (await store.jobs.getJob('av_a0'))!;
    await store.outbox.claimDueEvents(1000, 10, 30_000, FAIR);

    await store.accounts.advanceClock(accountId, { byMs: 4000 }, Number.MAX_SAFE_INTEGER); // while the attempt is in flight
    await store.outbox.scheduleRetry(inFlight!, 1, { at: 6000, clockOffsetMs: 0 }, failed('status 500'), 'down');

    expect((await store.outbox.getEvent(inFlight!))!.nextAttemptAt).toBe(2000);
    expect((await store.outbox.getEvent(atRest!))!.nextAttemptAt).toBe(6000);
  });
});

describe('the delivery log of an event retried and replayed without end', () => {
  it('keeps its latest MAX_KEPT_ATTEMPTS attempts, numbered, whichever way each ended, and counts every attempt', async () => {
    const [id] = await pendingEvents('a', 'https://a.example/hook', 1, 1000);
    const total = MAX_KEPT_ATTEMPTS + 7;
    // Each way an attempt is recorded: a retry, a failure that ends it, a delivery.
    for (let n = 1; n <= total; n++) {
      const attempt = { ...failed('status 500'), startedAt: n };
      if (n % 3 === 0) await store.outbox.markDelivered([{ eventId: id!, at: 6000, attempts: n, attempt: { ...succeeded, startedAt: n } }]);
      else if (n % 3 === 1) await store.outbox.scheduleRetry(id!, n, { at: 6000, clockOffsetMs: 0 }, attempt, 'down');
      else await store.outbox.markFailed(id!, n, attempt, 'down');
    }

    const kept = await store.outbox.attemptsOf([id!]);
    expect(kept.map((a) => a.number)).toEqual(Array.from({ length: MAX_KEPT_ATTEMPTS }, (_, i) => total - MAX_KEPT_ATTEMPTS + 1 + i));
    expect(kept.map((a) => a.startedAt)).toEqual(kept.map((a) => a.number));
    expect((await store.outbox.getEvent(id!))!.attempts).toBe(total);
  });
});

describe('nextDueAfter', () => {
  it('tells when the earliest event not due yet becomes due, whatever is due or in flight now', async () => {
    await pendingEvents('a', 'https://a.example/hook', 2, 1000); // due at 1000 and 1001
    await pendingEvents('b', 'https://b.example/hook', 1, 5000);
    await store.outbox.claimDueEvents(1500, 10, 30_000, FAIR);

    expect(await store.outbox.nextDueAfter(1500)).toBe(5000);
    expect(await store.outbox.nextDueAfter(999)).toBe(1000);
    expect(await store.outbox.nextDueAfter(5000)).toBeNull();
  });
});

/** Two attempts in flight per destination, one after three failures in a row. */
const FAIR = { perDestination: 2, circuitFailures: 3 };
/** An attempt as the dispatcher logs it: one that failed with `error`, or one that succeeded. */
const failed = (error: string): AttemptLog => ({ trigger: 'scheduled', startedAt: 5000, durationMs: 12, statusCode: /^status (\d+)$/.exec(error) ? Number(error.slice(7)) : null, error });
const succeeded: AttemptLog = { trigger: 'scheduled', startedAt: 5000, durationMs: 12, statusCode: 200, error: null };

/** `count` pending events to `url`, due at `dueAt`, each on a job of its own. */
async function pendingEvents(tag: string, url: string, count: number, dueAt: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const job = await queued(`av_${tag}${i}`, 1);
    const id = `evt_${tag}${i}`;
    const event = {
      id, type: 'avatar.ready', jobId: job.id, accountId: job.accountId, url, destination: destinationOf(url), payload: '{}',
      status: 'pending' as const, attempts: 0, nextAttemptAt: dueAt + i, lastError: null, createdAt: 0, deliveredAt: null, replay: false,
    };
    await store.jobs.completeJob(job.id, { status: 'ready', error: null, result: {}, at: dueAt }, event);
    ids.push(id);
  }
  return ids;
}

const claimedIds = (events: { id: string }[]) => events.map((e) => e.id).sort();

describe('fair claims across destinations', () => {
  it('gives each destination its share of the slots, however many events it has due first', async () => {
    await pendingEvents('a', 'https://a.example/hook', 6, 1000);
    await pendingEvents('b', 'https://b.example:8443/hook', 2, 2000);

    const first = await store.outbox.claimDueEvents(5000, 10, 30_000, FAIR);
    const second = await store.outbox.claimDueEvents(5000, 10, 30_000, FAIR);

    expect(claimedIds(first)).toEqual(['evt_a0', 'evt_a1', 'evt_b0', 'evt_b1']);
    expect(second).toEqual([]);
  });

  it("hands each claimed event over with its account's signing secret and clock", async () => {
    await pendingEvents('a', 'https://a.example/hook', 2, 1000);
    const [account] = await store.accounts.listAccounts();

    const claimed = await store.outbox.claimDueEvents(5000, 10, 30_000, FAIR);

    expect(claimed.map((e) => e.sender)).toEqual([1, 2].map(() => ({ signingSecret: account!.signingSecret, clockOffsetMs: account!.clockOffsetMs, standardWebhooks: false })));
  });

  it('counts the attempts in flight of every sender, also when claims race', async () => {
    await pendingEvents('a', 'https://a.example/hook', 8, 1000);

    const claims = await Promise.all([1, 2, 3, 4].map(() => store.outbox.claimDueEvents(5000, 10, 30_000, FAIR)));

    expect(claims.flat()).toHaveLength(2);
  });

  it('gives a destination room again as its attempts settle, and counts an expired lease as settled', async () => {
    await pendingEvents('a', 'https://a.example/hook', 4, 1000);
    await store.outbox.claimDueEvents(5000, 10, 30_000, FAIR);

    await store.outbox.markDelivered([{ eventId: 'evt_a0', at: 6000, attempts: 1, attempt: succeeded }]);
    const afterOne = await store.outbox.claimDueEvents(6000, 10, 30_000, FAIR);
    const afterLeases = await store.outbox.claimDueEvents(30_001, 10, 60_000, FAIR);

    expect(claimedIds(afterOne)).toEqual(['evt_a2']);
    expect(claimedIds(afterLeases)).toEqual(['evt_a1', 'evt_a2']); // the two whose leases ran out
  });

  it('gives a destination that failed three times in a row one attempt at a time, until one succeeds', async () => {
    await pendingEvents('a', 'https://a.example/hook', 7, 1000);
    const later = 100_000; // retries out of the way
    await store.outbox.claimDueEvents(5000, 10, 30_000, FAIR); // a0, a1
    const counts = [await store.outbox.scheduleRetry('evt_a0', 1, { at: later, clockOffsetMs: 0 }, failed('status 500'), 'down'), await store.outbox.scheduleRetry('evt_a1', 1, { at: later, clockOffsetMs: 0 }, failed('status 500'), 'down')];
    await store.outbox.claimDueEvents(5000, 10, 30_000, FAIR); // a2, a3
    counts.push(await store.outbox.scheduleRetry('evt_a2', 1, { at: later, clockOffsetMs: 0 }, failed('status 500'), 'down'));

    const open = await store.outbox.claimDueEvents(5000, 10, 30_000, FAIR); // a3 still in flight: no room
    counts.push(await store.outbox.scheduleRetry('evt_a3', 1, { at: later, clockOffsetMs: 0 }, failed('status 500'), 'down'));
    const probe = await store.outbox.claimDueEvents(5000, 10, 30_000, FAIR);
    await store.outbox.markDelivered([{ eventId: 'evt_a4', at: 5100, attempts: 1, attempt: succeeded }]);
    const closed = await store.outbox.claimDueEvents(5100, 10, 30_000, FAIR);

    expect(counts).toEqual([1, 2, 3, 4]);
    expect(open).toEqual([]);
    expect(claimedIds(probe)).toEqual(['evt_a4']);
    expect(claimedIds(closed)).toEqual(['evt_a5', 'evt_a6']);
  });

  it('counts as failures only what says the destination is down: a 404 of one tenant clears them, an attempt never made leaves them', async () => {
    await pendingEvents('a', 'https://shared.example/hook', 3, 1000);
    await store.outbox.claimDueEvents(5000, 10, 30_000, FAIR);

    const afterDown = await store.outbox.scheduleRetry('evt_a0', 1, { at: 100_000, clockOffsetMs: 0 }, failed('status 503'), 'down');
    const afterUnknown = await store.outbox.scheduleRetry('evt_a1', 1, { at: 100_000, clockOffsetMs: 0 }, failed('account no longer exists'), 'unknown');
    const afterUp = await store.outbox.scheduleRetry('evt_a2', 1, { at: 100_000, clockOffsetMs: 0 }, failed('status 404'), 'up');

    expect([afterDown, afterUnknown, afterUp]).toEqual([1, 1, 0]);
  });

  it('looks destination by destination when one destination fills the oldest events, so another is not left waiting', async () => {
    await pendingEvents('a', 'https://a.example/hook', 45, 1000);
    await pendingEvents('b', 'https://b.example/hook', 1, 2000);

    const claimed = await store.outbox.claimDueEvents(5000, 10, 30_000, FAIR); // reads 40 of a's first

    expect(claimedIds(claimed)).toEqual(['evt_a0', 'evt_a1', 'evt_b0']);
  });

  it('forgets the failures of a destination that has nothing left to send', async () => {
    await pendingEvents('a', 'https://a.example/hook', 1, 1000);
    await store.outbox.claimDueEvents(5000, 10, 30_000, FAIR);
    expect(await store.outbox.markFailed('evt_a0', 6, failed('status 500'), 'down')).toBe(1);
    await pendingEvents('b', 'https://a.example/other', 1, 7000);
    await store.outbox.claimDueEvents(8000, 10, 30_000, FAIR);

    expect(await store.outbox.scheduleRetry('evt_b0', 1, { at: 9000, clockOffsetMs: 0 }, failed('status 500'), 'down')).toBe(1);
  });
});

describe('the files jobs make', () => {
  async function* pieces(...parts: string[]) {
    for (const part of parts) yield Buffer.from(part);
  }
  async function read(file: { read(start: number, end: number): AsyncIterable<Uint8Array> } | null, start: number, end: number): Promise<string> {
    const out: Buffer[] = [];
    for await (const piece of file!.read(start, end)) out.push(Buffer.from(piece));
    return Buffer.concat(out).toString();
  }

  it('keeps a file whole, read in any range, and replaces it when the job makes it again', async () => {
    await queued('vid_file');

    const before = await store.files.getFile('vid_file', 'video.mp4');
    await store.files.putFile('vid_file', 'video.mp4', 'video/mp4', pieces('hello ', 'kept ', 'world'));
    const kept = await store.files.getFile('vid_file', 'video.mp4');
    const ranges = [await read(kept, 0, 15), await read(kept, 6, 9)];
    await store.files.putFile('vid_file', 'video.mp4', 'video/mp4', pieces('again'));
    const again = await store.files.getFile('vid_file', 'video.mp4');

    expect(before).toBeNull();
    expect(kept).toMatchObject({ contentType: 'video/mp4', size: 16 });
    expect(ranges).toEqual(['hello kept world', 'kept']);
    expect(again?.size).toBe(5);
    expect(await read(again, 0, 4)).toBe('again');
    expect(await store.files.getFile('vid_file', 'captions.vtt')).toBeNull();
  });
});
