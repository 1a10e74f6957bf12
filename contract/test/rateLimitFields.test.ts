// The structured rate-limit fields (ND-RATELIMIT-FIELDS): what the server writes, an
// RFC 9651 parser reads back; what breaks the draft's syntax is refused naming the field.
import { readFileSync } from 'node:fs';
import { serializeList } from 'structured-headers';
import { describe, expect, it } from 'vitest';
import {
  RATE_LIMIT_DRAFT,
  RateLimitFieldError,
  formatRateLimit,
  formatRateLimitPolicy,
  parseRateLimit,
  parseRateLimitPolicy,
  rateLimitWriter,
  structuredFieldsDisagree,
} from '../rateLimitFields.ts';

const POLICIES = [
  { name: 'minute', quota: 10, windowSeconds: 60 },
  { name: 'day', quota: 300, windowSeconds: 86_400 },
];

describe('writing the fields', () => {
  it('when given the windows of a bucket, then RateLimit-Policy is the draft example and what the parser library serialises', () => {
    const text = formatRateLimitPolicy(POLICIES);

    expect(text).toBe('"minute";q=10;w=60, "day";q=300;w=86400');
    expect(serializeList(POLICIES.map((p) => [p.name, new Map([['q', p.quota], ['w', p.windowSeconds]])]))).toBe(text);
    expect(parseRateLimitPolicy(text)).toEqual(POLICIES);
  });

  it('when given the active window, then RateLimit carries r and t and reads back the same', () => {
    const text = formatRateLimit({ name: 'minute', remaining: 3, resetSeconds: 42 });

    expect(text).toBe('"minute";r=3;t=42');
    expect(parseRateLimit(text)).toEqual([{ name: 'minute', remaining: 3, resetSeconds: 42 }]);
  });

  it("when a policy's writer writes its figures, then it writes what formatRateLimit writes, and refuses what it refuses", () => {
    const write = rateLimitWriter('minute');

    for (const [remaining, resetSeconds] of [[3, 42], [0, 1], [119, 60]] as const) {
      expect(write(remaining, resetSeconds)).toBe(formatRateLimit({ name: 'minute', remaining, resetSeconds }));
    }
    expect(() => write(-1, 1)).toThrow(RangeError);
    expect(() => write(1, 0.5)).toThrow(RangeError);
    expect(() => rateLimitWriter('a "b"')).toThrow(RangeError);
  });

  it('when a figure is negative or not whole, then nothing is written', () => {
    expect(() => formatRateLimit({ name: 'minute', remaining: -1, resetSeconds: 1 })).toThrow(RangeError);
    expect(() => formatRateLimitPolicy([{ name: 'minute', quota: 1.5 }])).toThrow(RangeError);
    expect(() => formatRateLimitPolicy([{ name: 'day', quota: Number.MAX_SAFE_INTEGER }])).toThrow(/15 digits/);
    expect(() => formatRateLimitPolicy([{ name: 'a "b"', quota: 1 }])).toThrow(RangeError);
  });
});

describe('reading the fields', () => {
  it('when the value has other spacing, optional parameters left out or others added, then it still reads (the draft allows each)', () => {
    expect(parseRateLimitPolicy('"burst";q=100;w=60,"daily";q=1000;w=86400;acme-x=1')).toEqual([
      { name: 'burst', quota: 100, windowSeconds: 60 },
      { name: 'daily', quota: 1000, windowSeconds: 86_400 },
    ]);
    expect(parseRateLimit('"default";r=999;pk=:dHJpYWwxMjEzMjM=:')).toEqual([{ name: 'default', remaining: 999 }]);
  });

  it.each([
    ['a Token for the name', 'RateLimit-Policy', () => parseRateLimitPolicy('minute;q=10;w=60'), /policy name must be a String/],
    ['no q', 'RateLimit-Policy', () => parseRateLimitPolicy('"minute";w=60'), /no q parameter/],
    ['a decimal q', 'RateLimit-Policy', () => parseRateLimitPolicy('"minute";q=1.5'), /q must be a non-negative Integer/],
    ['w of zero', 'RateLimit-Policy', () => parseRateLimitPolicy('"minute";q=10;w=0'), /w must be a positive Integer/],
    ['a String r', 'RateLimit', () => parseRateLimit('"minute";r="3";t=4'), /r must be a non-negative Integer/],
    ['a negative t', 'RateLimit', () => parseRateLimit('"minute";r=3;t=-4'), /t must be a non-negative Integer/],
    ['not a List at all', 'RateLimit', () => parseRateLimit('limit=10, remaining=3'), /policy name must be a String|not an RFC 9651 List/],
    ['broken syntax', 'RateLimit', () => parseRateLimit('"minute;r=3'), /not an RFC 9651 List/],
    ['an empty value', 'RateLimit', () => parseRateLimit(''), /empty List/],
    ['an Inner List', 'RateLimit', () => parseRateLimit('("minute");r=3'), /Inner List/],
  ])('when the value has %s, then it is refused naming %s and the rule', (_what, field, read, rule) => {
    let caught: unknown;
    try {
      read();
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(RateLimitFieldError);
    expect((caught as RateLimitFieldError).field).toBe(field);
    expect((caught as Error).message).toMatch(rule);
  });
});

describe('agreement with RateLimit-Limit, -Remaining and -Reset', () => {
  const trio = { limit: 10, remaining: 3, reset: 42 };

  it('when RateLimit says the trio of a policy whose quota is the limit, then they agree', () => {
    expect(structuredFieldsDisagree(POLICIES, [{ name: 'minute', remaining: 3, resetSeconds: 42 }], trio)).toBeNull();
  });

  it.each([
    ['another remaining', [{ name: 'minute', remaining: 4, resetSeconds: 42 }], POLICIES, /no member of RateLimit says r=3;t=42/],
    ['another reset', [{ name: 'minute', remaining: 3, resetSeconds: 41 }], POLICIES, /no member/],
    ['the day named for the minute', [{ name: 'day', remaining: 3, resetSeconds: 42 }], POLICIES, /no member/],
    ['a policy that is not listed', [{ name: 'hour', remaining: 3, resetSeconds: 42 }], POLICIES, /does not list/],
    ['more left than the quota', [{ name: 'minute', remaining: 3, resetSeconds: 42 }, { name: 'day', remaining: 301, resetSeconds: 5 }], POLICIES, /more than its quota/],
    ['a reset past the window', [{ name: 'minute', remaining: 3, resetSeconds: 61 }], POLICIES, /longer than its window/],
  ])('when RateLimit has %s, then they disagree, saying how', (_what, limits, policies, why) => {
    expect(structuredFieldsDisagree(policies, limits, trio)).toMatch(why);
  });
});

describe('the revision of the draft', () => {
  it('when the contract describes RateLimit-Policy and RateLimit, then it names the revision this module writes', () => {
    const bundle = JSON.parse(readFileSync(new URL('../../generated/openapi.json', import.meta.url), 'utf8')) as { components: { headers: Record<string, { description: string }> } };

    for (const header of ['RateLimit-Policy', 'RateLimit']) {
      expect(bundle.components.headers[header]?.description, header).toContain(`(${RATE_LIMIT_DRAFT})`);
    }
  });

  it("when given the draft's examples (revision 10's, with qu and pk), then they read as the fields of either revision the module takes", () => {
    expect(parseRateLimitPolicy('"burst";q=100;w=60,"daily";q=1000;w=86400')).toEqual([
      { name: 'burst', quota: 100, windowSeconds: 60 },
      { name: 'daily', quota: 1000, windowSeconds: 86_400 },
    ]);
    expect(parseRateLimitPolicy('"peruser";q=65535;qu="content-bytes";w=10;pk=:sdfjLJUOUH==:')).toEqual([{ name: 'peruser', quota: 65_535, windowSeconds: 10 }]);
    expect(parseRateLimit('"default";r=50;t=30')).toEqual([{ name: 'default', remaining: 50, resetSeconds: 30 }]);
  });
});
