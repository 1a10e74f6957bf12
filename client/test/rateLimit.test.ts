// rateLimitState: the structured fields first (ND-RATELIMIT-FIELDS), the trio after (RL-HEADERS).
import { describe, expect, it } from 'vitest';
import { rateLimitState } from '../src/index.ts';

const TRIO = { 'RateLimit-Limit': '10', 'RateLimit-Remaining': '3', 'RateLimit-Reset': '42' };

describe('rateLimitState', () => {
  it('when the answer has RateLimit-Policy and RateLimit, then it reads them, with every window of the bucket', () => {
    const headers = new Headers({
      'RateLimit-Policy': '"minute";q=10;w=60, "day";q=300;w=86400',
      RateLimit: '"day";r=2;t=900',
      // Disagrees on purpose: the structured fields win.
      ...TRIO,
    });

    expect(rateLimitState(headers)).toEqual({
      limit: 300,
      remaining: 2,
      resetSeconds: 900,
      window: 'day',
      policies: [
        { name: 'minute', quota: 10, windowSeconds: 60 },
        { name: 'day', quota: 300, windowSeconds: 86_400 },
      ],
      source: 'structured',
    });
  });

  it('when RateLimit lists several windows, then the one with fewest left binds', () => {
    const headers = { 'ratelimit-policy': '"minute";q=10;w=60, "day";q=300;w=86400', ratelimit: '"minute";r=9;t=5, "day";r=1;t=800' };

    expect(rateLimitState(headers)).toMatchObject({ limit: 300, remaining: 1, resetSeconds: 800, window: 'day' });
  });

  it('when only RateLimit comes, then the limit is the trio\'s', () => {
    expect(rateLimitState(new Headers({ RateLimit: '"minute";r=3;t=42', ...TRIO }))).toEqual({ limit: 10, remaining: 3, resetSeconds: 42, window: 'minute', source: 'structured' });
  });

  it('when the answer has only the trio, or its structured fields do not parse, then it reads the trio', () => {
    expect(rateLimitState(new Headers(TRIO))).toEqual({ limit: 10, remaining: 3, resetSeconds: 42, source: 'trio' });
    expect(rateLimitState(new Headers({ RateLimit: 'limit=10, remaining=3', ...TRIO }))?.source).toBe('trio');
    expect(rateLimitState(new Headers({ RateLimit: '"minute";r=3', ...TRIO }))?.source).toBe('trio');
  });

  it('when only the X- twins come, then it reads them', () => {
    expect(rateLimitState({ 'x-ratelimit-limit': '5', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '7' })).toEqual({ limit: 5, remaining: 0, resetSeconds: 7, source: 'x-trio' });
  });

  it('when the answer has no rate-limit headers, then there is no state', () => {
    expect(rateLimitState(new Headers({ 'Content-Type': 'application/json' }))).toBeUndefined();
  });
});
