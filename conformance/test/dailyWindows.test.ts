// rate-limits.daily-windows reads RateLimit-Reset as the source lets a window mean it:
// until the window admits again, or, for a sliding window, until it is whole again.
import { describe, expect, it } from 'vitest';
import { startFixture } from './fixtures/reference.ts';
import { run } from './helpers.ts';

describe('the daily windows', () => {
  it.each(['fixed', 'sliding'] as const)('when the day window is %s, then the key is judged in the window its Reset describes and passes', async (dayWindow) => {
    const fixture = await startFixture({ config: { dayWindow } });
    try {
      const report = await run(fixture, 'core', { only: ['rate-limits.daily-windows'] });

      const result = report.results.find((r) => r.id === 'rate-limits.daily-windows');
      expect(`${result?.outcome}${result?.failure ? `: ${result.failure.message} (${result.failure.received ?? ''})` : ''}${result?.reason ? `: ${result.reason}` : ''}`).toBe('passed');
    } finally {
      await fixture.close();
    }
  }, 60_000);

  it('when a sliding day window never refuses, then it is still caught', async () => {
    const fixture = await startFixture({ config: { dayWindow: 'sliding' }, flaws: { noDailyLimit: true } });
    try {
      const report = await run(fixture, 'core', { only: ['rate-limits.daily-windows'] });

      const result = report.results.find((r) => r.id === 'rate-limits.daily-windows');
      expect(result?.outcome).toBe('failed');
      expect(result?.failure?.clause).toBe('RL-BUCKETS');
    } finally {
      await fixture.close();
    }
  }, 60_000);
});
