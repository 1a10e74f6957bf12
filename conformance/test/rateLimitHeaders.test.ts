// When two answers of one key describe one rate-limit window, and when the second may be
// of the next window: a short window's successor must not pass for it because a loaded
// machine delayed the answers.
import { describe, expect, it } from 'vitest';
import type { Exchange } from '../src/http.ts';
import { remainingRegressions } from '../src/observe/rate-limit-headers.ts';

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

  it('when the window length is not known, then reset moments within 1.5 s are taken for one window', () => {
    const late = answer(9_000, 2_300, 1, 1);
    const next = answer(11_310, 5, 19, 2);

    expect(remainingRegressions([late, next]).map((r) => r.why)).toEqual(['Remaining went up from 1 to 19 within one window']);
  });
});
