// When two answers of one key describe one rate-limit window, and when the second may be
// of the next window: a short window's successor must not pass for it because a loaded
// machine delayed the answers.
import { describe, expect, it } from 'vitest';
import type { Exchange } from '../src/http.ts';
import { judgeStructuredFields, remainingRegressions } from '../src/observe/rate-limit-headers.ts';

let seq = 0;
/** A read of key main sent at `startedAt`, answered `durationMs` later with these headers. */
function answer(startedAt: number, durationMs: number, remaining: number, reset: number): Exchange {
  return {
    seq: ++seq, key: 'main', method: 'GET', path: '/v1/me', requestHeaders: {}, requestBody: undefined, status: 200,
    responseHeaders: { 'ratelimit-limit': '20', 'ratelimit-remaining': String(remaining), 'ratelimit-reset': String(reset) },
    bodyText: '{}', json: {}, startedAt, durationMs, bucket: 'read', retriedAfter429: 0, note: undefined,
  };
}
const THREE_SECONDS = () => 3000;

describe('remainingRegressions', () => {
  it('when Remaining rises between two answers of one window, then the pair is named', () => {
    const found = remainingRegressions([answer(10_000, 5, 12, 2), answer(10_300, 5, 14, 2)], undefined, THREE_SECONDS);

    expect(found.map((r) => r.why)).toEqual(['Remaining went up from 12 to 14 within one window']);
  });

  it('when the last answer of a 3 s window came late and the next window had opened meanwhile, then nothing is named', () => {
    // Sent at 9,000 in a window that ends at 10,000: counted last (reset rounded up to 1 s),
    // but answered only at 11,300 on a loaded machine. The next window opened at 10,050 for
    // another request; the next answer (sent at 11,310) has 1.7 s of it left (reset 2).
    // Arrival plus reset: 12,300 and 13,315, within 1.5 s of each other.
    const late = answer(9_000, 2_300, 1, 1);
    const next = answer(11_310, 5, 19, 2);

    expect(remainingRegressions([late, next], undefined, THREE_SECONDS)).toEqual([]);
  });

  it('when the later request was sent after the reset moment the earlier answer announced, then a rise is no regression, whatever the window length', () => {
    // Reset 1 s on an answer sent at 9,000: the window may have reset as soon as 9,000.
    const late = answer(9_000, 2_300, 1, 1);
    const next = answer(11_310, 5, 19, 2);

    expect(remainingRegressions([late, next])).toEqual([]);
  });

  it('when the window length is not known, then reset moments within 1.5 s are taken for one window', () => {
    const first = answer(9_000, 5, 3, 4);
    const second = answer(9_400, 5, 12, 4);

    expect(remainingRegressions([first, second]).map((r) => r.why)).toEqual(['Remaining went up from 3 to 12 within one window']);
  });

  it('when the window is sliding or not stated, then room freed as the last window\'s weight falls is allowed, and a count that never goes down still shows', () => {
    // A limit of 20 in 3 s: 50 ms frees at most a third of a request, rounded up, and one for whole numbers.
    const rising = [answer(20_000, 5, 10, 2), answer(20_050, 5, 11, 2)];
    const stuck = [answer(30_000, 5, 10, 2), answer(30_010, 5, 10, 2), answer(30_020, 5, 10, 2), answer(30_030, 5, 10, 2)];

    expect(remainingRegressions(rising, undefined, THREE_SECONDS, 'sliding')).toEqual([]);
    expect(remainingRegressions(rising, undefined, THREE_SECONDS, null)).toEqual([]);
    expect(remainingRegressions(rising, undefined, THREE_SECONDS, 'fixed').map((r) => r.why)).toEqual(['Remaining went up from 10 to 11 within one window']);
    expect(remainingRegressions(stuck, undefined, THREE_SECONDS, 'sliding').map((r) => r.why)).toEqual(['Remaining stayed 10 after 3 counted requests within one window (at most 2 freed meanwhile by a sliding window)']);
  });

  it('when a sliding log announces the moment it is whole again, then what the key sent a window earlier may leave before it, and nothing more', () => {
    // Limit 10 in 60 s: five requests in the first half second, then two answers a window
    // on, 1.5 s apart, each announcing 60 s (until its own request leaves); by the second
    // the five have left.
    const early = [0, 100, 200, 300, 400].map((at) => answer(at, 5, 0, 60));
    const before = answer(59_000, 5, 4, 60);
    const after = answer(60_500, 5, 8, 60);
    const sixtySeconds = () => 60_000;

    expect(remainingRegressions([before, after], undefined, sixtySeconds, null, [...early, before, after])).toEqual([]);
    // Without those early requests nothing could have left: the rise is named.
    expect(remainingRegressions([before, after], undefined, sixtySeconds, null).map((r) => r.why)).toEqual(['Remaining went up from 4 to 8 within one window']);
  });
});

describe('judgeStructuredFields (ND-RATELIMIT-FIELDS)', () => {
  const trio = { 'ratelimit-limit': '10', 'ratelimit-remaining': '3', 'ratelimit-reset': '42' };
  const policy = '"minute";q=10;w=60, "day";q=300;w=86400';

  it('when an answer has neither field, then they were not sent: nothing to judge', () => {
    expect(judgeStructuredFields(trio)).toEqual({ sent: false });
  });

  it('when both say the trio, then they hold; when only one is sent, it is judged alone', () => {
    expect(judgeStructuredFields({ ...trio, 'ratelimit-policy': policy, ratelimit: '"minute";r=3;t=42' })).toEqual({ sent: true, problem: null });
    expect(judgeStructuredFields({ ...trio, ratelimit: '"minute";r=3;t=42' })).toEqual({ sent: true, problem: null });
    expect(judgeStructuredFields({ ...trio, 'ratelimit-policy': policy })).toEqual({ sent: true, problem: null });
  });

  it.each([
    ['the draft-06 dictionary', 'syntax', { ratelimit: 'limit=10, remaining=3, reset=42' }, /not an RFC 9651 List/],
    ['a Token name', 'syntax', { 'ratelimit-policy': 'minute;q=10;w=60' }, /must be a String/],
    ['an r other than Remaining', 'agreement', { 'ratelimit-policy': policy, ratelimit: '"minute";r=4;t=42' }, /no member of RateLimit says r=3;t=42/],
    ['no policy with the Limit', 'agreement', { 'ratelimit-policy': '"minute";q=11;w=60' }, /no policy with q=10/],
    ['the trio missing', 'agreement', { 'ratelimit-limit': undefined, 'ratelimit-policy': policy, ratelimit: '"minute";r=3;t=42' }, /without RateLimit-Limit/],
  ])('when the answer has %s, then it fails by its %s', (_what, rule, fields, why) => {
    const verdict = judgeStructuredFields({ ...trio, ...fields });
    expect(verdict).toMatchObject({ sent: true, rule });
    expect(verdict.sent && verdict.problem).toMatch(why);
  });

  it('when only the syntax is judged (a mock\'s examples), then figures that disagree pass', () => {
    expect(judgeStructuredFields({ ...trio, ratelimit: '"minute";r=119;t=42' }, false)).toEqual({ sent: true, problem: null });
  });
});
