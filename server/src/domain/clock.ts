/** The only source of "now" for the domain, so tests can move time (minute, day, month windows). */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };
