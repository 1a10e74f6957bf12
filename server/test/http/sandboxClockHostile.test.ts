// The sandbox clock under hostile moves (ND-SANDBOX-CLOCK): seeded sequences of moves by
// random amounts and in every form a client can write (seconds in and out of range,
// instants in RFC 3339's other spellings, leap seconds, years past 9999), from any offset
// up to the cap. Whatever the sequence, every answer is one the contract documents (the
// harness validates each against it), never a 5xx, every time shown is an RFC 3339
// date-time with a four-digit year, and the account's time only grows and never passes
// the cap.
//
// Seeded and reproducible: CLOCK_HOSTILE_SEED replays a run, CLOCK_HOSTILE_RUNS sizes it.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_OFFSET_SECONDS } from '../../src/domain/sandboxClock.ts';
import { fakeClock } from '../support/clock.ts';
import { GENEROUS_PLAN, promptAvatar, startTestService, type Reply, type TestService } from '../support/harness.ts';
import { startReceiver, type TestReceiver } from '../support/receiver.ts';

const SEED = Number(process.env.CLOCK_HOSTILE_SEED ?? 20_261_126);
const RUNS = Number(process.env.CLOCK_HOSTILE_RUNS ?? 30);

const DAY_MS = 86_400_000;
const YEAR_AND_DAY_S = 366 * 86_400;
const CAP_MS = MAX_OFFSET_SECONDS * 1000;

/** RFC 3339's date-time as this service writes it: four-digit year, UTC. */
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
const TIME_MEMBER = /(_at|^now|^period_start|^period_end)$/;

/** Every member of an answer that holds a time, with where it is, that is not RFC 3339 within four-digit years. */
function badTimes(node: unknown, path = ''): string[] {
  if (Array.isArray(node)) return node.flatMap((item, i) => badTimes(item, `${path}[${i}]`));
  if (!node || typeof node !== 'object') return [];
  return Object.entries(node).flatMap(([key, value]) => {
    const here = path ? `${path}.${key}` : key;
    if (TIME_MEMBER.test(key) && value !== null && typeof value !== 'object') {
      return typeof value === 'string' && RFC3339.test(value) && !Number.isNaN(Date.parse(value)) ? [] : [`${here}: ${JSON.stringify(value)}`];
    }
    return badTimes(value, here);
  });
}

/** An instant written in one of RFC 3339's spellings, or in one the schema refuses. */
type Spelling = 'iso' | 'seconds_only' | 'lower' | 'space' | 'offset' | 'nanos' | 'leap';

function spell(ms: number, spelling: Spelling, offsetMinutes: number): string {
  if (!Number.isFinite(ms) || Math.abs(ms) > 8.64e15) return '+275760-09-13T00:00:00.001Z';
  const iso = new Date(ms).toISOString(); // past 9999 this is the six-digit form, which the schema refuses
  switch (spelling) {
    case 'iso':
      return iso;
    case 'seconds_only':
      return iso.replace(/\.\d{3}Z$/, 'Z');
    case 'lower':
      return iso.replace('T', 't').replace('Z', 'z');
    case 'space':
      return iso.replace('T', ' ');
    case 'nanos':
      return iso.replace(/Z$/, '999999Z');
    case 'offset': {
      const local = new Date(ms + offsetMinutes * 60_000).toISOString().replace(/Z$/, '');
      const sign = offsetMinutes < 0 ? '-' : '+';
      const abs = Math.abs(offsetMinutes);
      return `${local}${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
    }
    case 'leap':
      return `${iso.slice(0, 10)}T23:59:60Z`;
  }
}

type Move =
  | { form: 'seconds'; seconds: unknown }
  | { form: 'to'; deltaMs: number; spelling: Spelling; offsetMinutes: number }
  | { form: 'fixed_to'; to: string }
  | { form: 'both' }
  | { form: 'nothing' };

const move: fc.Arbitrary<Move> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      form: fc.constant('seconds' as const),
      seconds: fc.oneof(
        fc.integer({ min: 1, max: YEAR_AND_DAY_S }),
        fc.constantFrom(0, -1, YEAR_AND_DAY_S, YEAR_AND_DAY_S + 1, MAX_OFFSET_SECONDS, 1.5, 1e300, -1e300, 2 ** 53, '60', null, true),
      ),
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      form: fc.constant('to' as const),
      deltaMs: fc.oneof(fc.integer({ min: -DAY_MS, max: DAY_MS }), fc.integer({ min: 1, max: 367 * DAY_MS }), fc.integer({ min: -200 * 365 * DAY_MS, max: 200 * 365 * DAY_MS })),
      spelling: fc.constantFrom<Spelling>('iso', 'seconds_only', 'lower', 'space', 'offset', 'nanos', 'leap'),
      offsetMinutes: fc.integer({ min: -(23 * 60 + 59), max: 23 * 60 + 59 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      form: fc.constant('fixed_to' as const),
      to: fc.constantFrom('9999-12-31T23:59:59Z', '9999-12-31T23:59:60Z', '0000-01-01T00:00:00Z', '2026-02-30T00:00:00Z', '2026-12-31T23:59:60Z', '2026-06-30T23:59:60+00:00', 'tomorrow', '', '2026-11-02'),
    }),
  },
  { weight: 1, arbitrary: fc.constantFrom({ form: 'both' as const }, { form: 'nothing' as const }) },
);

/** Where a run's account starts: its own time, near the cap, at the cap, or anywhere up to it. */
const startOffsetMs = fc.oneof(
  fc.constant(0),
  fc.integer({ min: 0, max: 2 * YEAR_AND_DAY_S }).map((s) => CAP_MS - s * 1000),
  fc.constant(CAP_MS),
  fc.integer({ min: 0, max: MAX_OFFSET_SECONDS }).map((s) => s * 1000),
);

describe('the sandbox clock under seeded hostile moves', () => {
  const clock = fakeClock(Date.UTC(2026, 10, 2, 9, 0, 0));
  let svc: TestService;
  let receiver: TestReceiver;
  beforeAll(async () => {
    receiver = await startReceiver();
    svc = await startTestService({ clock });
  });
  afterAll(async () => {
    await svc.dispose();
    await receiver.close();
  });

  function expectContractAnswer(r: Reply, what: string, allowed: number[]): void {
    expect(allowed, `${what} answered ${r.status}: ${JSON.stringify(r.body)}`).toContain(r.status);
    expect(badTimes(r.body), `${what}: times that are not RFC 3339`).toEqual([]);
  }

  it('answers every move as the contract says, never 5xx, with RFC 3339 times everywhere, and the account time only grows up to its cap', async () => {
    let eventsSeen = 0;
    await fc.assert(
      fc.asyncProperty(startOffsetMs, fc.array(move, { minLength: 1, maxLength: 8 }), async (start, moves) => {
        const { api_key: key, account_id: accountId } = await svc.account({ credits: 10, plan: GENEROUS_PLAN });
        // With a webhook, so the event and its attempts show their times too.
        const created = await svc.request('POST', '/v1/avatars', { key, json: promptAvatar({ webhook_url: `${receiver.url}/hook` }) });
        expectContractAnswer(created, 'the first create', [202]);
        if (start > 0) expect((await svc.store.accounts.advanceClock(accountId, { byMs: start }, CAP_MS)).ok).toBe(true);
        let offsetMs = start;

        for (const m of moves) {
          const accountTime = clock.now() + offsetMs;
          const body =
            m.form === 'seconds' ? { seconds: m.seconds }
            : m.form === 'to' ? { to: spell(accountTime + m.deltaMs, m.spelling, m.offsetMinutes) }
            : m.form === 'fixed_to' ? { to: m.to }
            : m.form === 'both' ? { seconds: 60, to: spell(accountTime + DAY_MS, 'iso', 0) }
            : {};
          const moved = await svc.request('POST', '/v1/test_helpers/clock/advance', { key, json: body });
          expectContractAnswer(moved, `POST clock/advance ${JSON.stringify(body)}`, [200, 422]);
          if (moved.status === 422) {
            expect(moved.body.code).toBe('validation_failed');
            for (const e of moved.body.errors) expect(['seconds', 'to', '']).toContain(e.field);
          }
          // The one form whose outcome is plain arithmetic: a whole number of seconds moves exactly when it fits.
          if (m.form === 'seconds') {
            const fits = Number.isInteger(m.seconds) && (m.seconds as number) >= 1 && (m.seconds as number) <= YEAR_AND_DAY_S && offsetMs + (m.seconds as number) * 1000 <= CAP_MS;
            expect(moved.status, `seconds ${String(m.seconds)} from an offset of ${offsetMs / 1000} s`).toBe(fits ? 200 : 422);
            if (!fits && Number.isInteger(m.seconds) && (m.seconds as number) >= 1 && (m.seconds as number) <= YEAR_AND_DAY_S) {
              expect(moved.body.errors.map((e: { field: string; rule: string }) => `${e.field}:${e.rule}`)).toEqual(['seconds:offset_limit']);
            }
          }
          if (m.form === 'to' && m.spelling === 'leap' && /^\d{4}-/.test(body.to as string)) {
            expect(moved.body.errors?.map((e: { field: string; rule: string }) => `${e.field}:${e.rule}`)).toEqual(['to:leap_second']);
          }
          const read = await svc.request('GET', '/v1/test_helpers/clock', { key });
          expectContractAnswer(read, 'GET clock', [200]);
          const now = read.body.offset_seconds * 1000;
          expect(now, 'the account time never goes back').toBeGreaterThanOrEqual(offsetMs);
          expect(now, 'the account time never passes its cap').toBeLessThanOrEqual(CAP_MS);
          if (moved.status === 200) expect(moved.body).toEqual(read.body);
          else expect(now, 'a refused move moves nothing').toBe(offsetMs);
          offsetMs = now;
        }

        // What the account sees at the time it was moved to: all of it the contract's.
        const me = await svc.request('GET', '/v1/me', { key });
        const create = await svc.request('POST', '/v1/avatars', { key, json: promptAvatar() });
        const list = await svc.request('GET', '/v1/avatars', { key });
        const record = await svc.request('GET', `/v1/avatars/${created.body.id}`, { key });
        const events = await svc.request('GET', '/v1/webhook-events', { key });
        expectContractAnswer(me, 'GET /v1/me', [200]);
        expectContractAnswer(create, 'POST /v1/avatars', [202, 402]);
        expectContractAnswer(list, 'GET /v1/avatars', [200]);
        expectContractAnswer(record, 'GET /v1/avatars/{id}', [200]);
        expectContractAnswer(events, 'GET /v1/webhook-events', [200]);
        eventsSeen += events.body.data.length;
        for (const event of events.body.data) expectContractAnswer(await svc.request('GET', `/v1/webhook-events/${event.id}`, { key }), 'GET /v1/webhook-events/{id}', [200]);
        const period = new Date(clock.now() + offsetMs).toISOString().slice(0, 7);
        expect(me.body.credits.period_start.slice(0, 7), 'the credit period is the account time\'s month').toBe(period);
        expect(create.status, 'a new month has the quota again; the same month has spent it').toBe(period === '2026-11' ? 402 : 202);
      }),
      { seed: SEED, numRuns: RUNS },
    );
    expect(eventsSeen, 'webhook events whose times were judged').toBeGreaterThan(0);
  }, 60_000);
});
