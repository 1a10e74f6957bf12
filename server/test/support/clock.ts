import type { Clock } from '../../src/domain/clock.ts';

export interface FakeClock extends Clock {
  set(ms: number): void;
  advance(ms: number): void;
}

/** A clock the test moves by hand, for the minute, day and month windows. */
export function fakeClock(start = Date.UTC(2026, 10, 2, 9, 0, 0)): FakeClock {
  let now = start;
  return {
    now: () => now,
    set: (ms) => {
      now = ms;
    },
    advance: (ms) => {
      now += ms;
    },
  };
}
