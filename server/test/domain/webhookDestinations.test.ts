// Fair delivery's rules, apart from any store: what a destination is, what an attempt
// says of it, and how a claim shares the slots.
import { describe, expect, it } from 'vitest';
import { destinationHealth, destinationLimit, destinationOf, pickFairly } from '../../src/domain/webhookDestinations.ts';

const FAIR = { perDestination: 2, circuitFailures: 3 };

describe('destinationOf', () => {
  it.each([
    ['https://Hooks.Example.com/a?b=1', 'hooks.example.com:443'],
    ['http://hooks.example.com/a', 'hooks.example.com:80'],
    ['https://hooks.example.com:80/a', 'hooks.example.com:80'],
    ['http://[::1]:8080/x', '[::1]:8080'],
    ['https://hooks.example.com./a', 'hooks.example.com:443'],
    ['https://HOOKS.example.com.../a', 'hooks.example.com:443'],
  ])('%s is sent to %s', (url, destination) => {
    expect(destinationOf(url)).toBe(destination);
  });
});

describe('destinationHealth', () => {
  it.each([
    [true, null, 'down'], // no answer: refused, reset, timed out
    [true, 500, 'down'],
    [true, 503, 'down'],
    [true, 429, 'down'],
    [true, 408, 'down'],
    [true, 200, 'up'],
    [true, 404, 'up'], // one tenant's stale URL on a shared host
    [true, 410, 'up'],
    [true, 301, 'up'],
    [false, null, 'unknown'], // never sent: account gone, URL refused
  ] as const)('an attempt that was made: %s, status %s says %s', (attempted, status, health) => {
    expect(destinationHealth(attempted, status)).toBe(health);
  });
});

describe('pickFairly', () => {
  it('takes each destination up to its room, oldest first, and lets the others have the rest', () => {
    const due = ['a', 'a', 'a', 'b', 'a', 'c'].map((destination, i) => ({ id: i, destination }));
    const load = { inFlight: new Map([['b', 1]]), failures: new Map([['c', 3]]) };

    const picked = pickFairly(due, load, FAIR, 10);

    expect(picked.map((e) => e.id)).toEqual([0, 1, 3, 5]); // a: 2; b: 1 left of 2; c: failing, 1
    expect(destinationLimit(3, FAIR)).toBe(1);
  });
});
