import { describe, expect, it } from 'vitest';
import { Gate } from '../src/pacer.ts';

function clock() {
  let now = 0;
  const sleeps: number[] = [];
  return { sleeps, now: () => now, sleep: async (ms: number) => void (sleeps.push(ms), (now += ms)), advance: (ms: number) => (now += ms) };
}

const window = (remaining: number, reset: number, limit = 10) => ({ 'ratelimit-limit': String(limit), 'ratelimit-remaining': String(remaining), 'ratelimit-reset': String(reset) });

describe('Gate', () => {
  it('when the window is unknown, then one request goes at a time until an answer teaches it', async () => {
    const time = clock();
    const gate = new Gate(time.now, time.sleep);
    await gate.acquire();
    expect(gate.capacity()).toBe(0);
    gate.observe(202, window(9, 60), undefined);
    gate.release();
    expect(gate.capacity()).toBe(9);
  });

  it('when the window is used up, then the next request waits for its reset instead of drawing a 429', async () => {
    const time = clock();
    const gate = new Gate(time.now, time.sleep);
    gate.observe(202, window(1, 12), undefined);
    await gate.acquire();
    gate.observe(202, window(0, 12), undefined);
    gate.release();
    await gate.acquire();
    expect(time.sleeps).toHaveLength(1);
    expect(time.sleeps[0]).toBeGreaterThanOrEqual(12_000);
    expect(time.sleeps[0]).toBeLessThan(12_500);
    // After the reset the limit is assumed again.
    expect(gate.capacity()).toBe(9);
  });

  it('when a 429 arrives, then the gate stays shut for Retry-After seconds', async () => {
    const time = clock();
    const gate = new Gate(time.now, time.sleep);
    gate.observe(429, window(0, 40), 7);
    expect(gate.waitMs()).toBeGreaterThanOrEqual(7000);
    await gate.acquire();
    expect(time.sleeps[0]).toBeGreaterThanOrEqual(7000);
  });

  it('when answers to concurrent requests arrive out of order, then the lower count of the same window wins', () => {
    const time = clock();
    const gate = new Gate(time.now, time.sleep);
    gate.observe(200, window(3, 30), undefined);
    gate.observe(200, window(5, 30), undefined);
    expect(gate.remaining).toBe(3);
  });

  it('when a service announces a wait longer than the window of its limit, then the gate waits no longer than that window', async () => {
    const time = clock();
    // A limit of 10 belongs to a 60 s window; Reset and Retry-After claim an hour.
    const gate = new Gate(time.now, time.sleep, (limit) => (limit === 10 ? 60 : 86_400));
    gate.observe(429, window(0, 3600), 3600);
    await gate.acquire();
    expect(time.sleeps).toHaveLength(1);
    expect(time.sleeps[0]).toBeLessThanOrEqual(60_000 + 150);
  });
});
