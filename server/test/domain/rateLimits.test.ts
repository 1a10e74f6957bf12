import { describe, expect, it } from 'vitest';
import { activeWindow, ceilSeconds, decide } from '../../src/domain/rateLimits.ts';

const limits = { minute: 10, day: 300 };
const at = Date.UTC(2026, 10, 2, 23, 59, 20); // 40 s to the minute, 40 s to the day

describe('decide', () => {
  it('admits and counts the request in every window while each has room', () => {
    const d = decide(limits, { minute: 3, day: 50 }, at, true);

    expect(d.allowed).toBe(true);
    expect(d.windows.map((w) => [w.window, w.remaining, w.resetMs])).toEqual([['minute', 6, 40_000], ['day', 249, 40_000]]);
  });

  it('refuses without counting anywhere when one window is full', () => {
    const d = decide(limits, { minute: 2, day: 300 }, at, true);

    expect(d.allowed).toBe(false);
    expect(d.windows.map((w) => w.remaining)).toEqual([8, 0]);
  });

  it('peeks without counting', () => {
    expect(decide(limits, { minute: 10, day: 10 }, at, false)).toMatchObject({ allowed: true, windows: [{ remaining: 0 }, { remaining: 290 }] });
  });
});

describe('activeWindow', () => {
  it.each([
    ['the fewest remaining', { minute: 1, day: 50 }, 'minute'],
    ['the day once it has fewer left', { minute: 1, day: 295 }, 'day'],
    ['the later reset on a tie', { minute: 0, day: 290 }, 'day'],
  ])('picks %s', (_case, counts, expected) => {
    expect(activeWindow(decide(limits, counts, Date.UTC(2026, 10, 2, 12, 0, 0), true)).window).toBe(expected);
  });

  it('on a refusal, picks the full window that admits last, so Retry-After is the real wait', () => {
    const both = decide({ minute: 1, day: 1 }, { minute: 1, day: 1 }, Date.UTC(2026, 10, 2, 12, 0, 0), true);

    expect(activeWindow(both).window).toBe('day');
  });
});

describe('ceilSeconds', () => {
  it.each([[1, 1], [1000, 1], [1001, 2], [59_999, 60], [0, 1]])('%i ms -> %i s', (ms, s) => {
    expect(ceilSeconds(ms)).toBe(s);
  });
});
