// Tests the tester: each broken fixture breaks one clause, and the run must fail on
// exactly the check that names it, with that clause in its failure.
import { describe, expect, it, vi } from 'vitest';
import { BROKEN } from './fixtures/broken.ts';
import { DEFAULT_CONFIG, startFixture } from './fixtures/reference.ts';
import { failures, outcomes, run } from './helpers.ts';

// The runs mostly wait on timers (jobs, webhook retries, rate-limit windows), so many
// can share the CPU without skewing the timings they check.
vi.setConfig({ maxConcurrency: 10 });

/**
 * Ten runs share one process: on a loaded machine one takes several times its quiet
 * time (seen: 63 s for a run of 27 s, the one whose retries never come), and the runner
 * lengthens its waits by its own stalls. Still far within the runs' own stated bound.
 */
const CONCURRENT_RUN_MS = 180_000;

describe('the runner against broken implementations', () => {
  it.concurrent.each(BROKEN.map((broken) => [broken.name, broken] as const))('when the server has %s, then it is caught', async (_name, broken) => {
    const fixture = await startFixture({ flaws: broken.flaws, ...(broken.config ? { config: broken.config } : {}) });
    try {
      const report = await run(fixture, broken.profile ?? 'contract', broken.run);
      const failed = report.results.filter((r) => r.outcome === 'failed');
      // The whole failures in the message: a second check that fails now and then must say why.
      expect(failures(report).map((f) => f.split(':')[0]), failures(report).join('\n')).toEqual([`${broken.catches} (${broken.clause})`]);
      expect(failed[0]?.id).toBe(broken.catches);
      expect([...(failed[0]?.clauses ?? []), ...(failed[0]?.decisions ?? [])]).toContain(broken.clause);
      expect(failed[0]?.failure?.clause).toBe(broken.clause);
      // The failure explains itself: what was expected, what came back, how to fix it.
      expect(failed[0]?.failure?.message).toBeTruthy();
      expect(report.verdict).toBe('fail');
      expect(report.exitCode).toBe(1);
      // The clause matrix lists the source's clauses; a contract decision is in the check's failure alone.
      if (!broken.clause.startsWith('ND-')) expect(report.clauses.find((c) => c.id === broken.clause)?.outcome).toBe('failed');
    } finally {
      await fixture.close();
    }
  }, CONCURRENT_RUN_MS);

  it('when every create answer waits for generation, then three more of each kind were made one at a time, all done at their first read, before it fails', async () => {
    const fixture = await startFixture({ flaws: { synchronousCreate: true } });
    try {
      const report = await run(fixture, 'core', { only: ['avatars.create-returns-at-once'] });
      const failure = report.results.find((r) => r.id === 'avatars.create-returns-at-once')?.failure;
      expect(failure?.clause).toBe('AV-ASYNC');
      expect(failure?.message).toMatch(/the run's \d+ and 3 more made one at a time: generation ran before the answer/);
      // Both kinds fail; the failure shows one of them, with its three extra creates.
      expect(failure?.received).toMatch(/extra-(avatar|video)-1: answered .*extra-\1-2: answered .*extra-\1-3: answered after \d+ ms; read \d+ ms later: (ready|failed)$/);
    } finally {
      await fixture.close();
    }
  }, 90_000);

  describe('when the second key has used up its day before rate-limits.per-key runs (as a loaded run\'s retried refusals do)', () => {
    // Its refusal is then the day's, held off for hours, while the shortest window has room
    // again: another key admitted then says nothing of how the shortest window is kept.
    const dayUsedUp = { clock: false, usedToday: { second: { generation: DEFAULT_CONFIG.limits.day.generation } } };

    it('and every key shares one shortest window, then the empty key is taken over it instead and the sharing is caught', async () => {
      const fixture = await startFixture({ flaws: { sharedRateLimit: true }, config: dayUsedUp });
      try {
        const report = await run(fixture, 'contract', { only: ['rate-limits.per-key'] });

        expect(failures(report).map((f) => f.split(':')[0])).toEqual(['rate-limits.per-key (RL-PER-KEY)']);
        expect(report.results.find((r) => r.id === 'rate-limits.per-key')?.failure?.exchanges?.[0]).toMatch(/^> POST \/v1\/avatars {2}\[key: empty\]/);
      } finally {
        await fixture.close();
      }
    }, 60_000);

    it('and each key has its own windows, then it passes', async () => {
      const fixture = await startFixture({ config: dayUsedUp });
      try {
        const report = await run(fixture, 'contract', { only: ['rate-limits.per-key'] });

        expect(outcomes(report, 'passed')).toEqual(['rate-limits.per-key']);
      } finally {
        await fixture.close();
      }
    }, 60_000);
  });

  it('when a forced failure says its code without a message, then the avatar twin and the video twin of failed-has-error both fail it', async () => {
    const fixture = await startFixture({ flaws: { forcedFailureWithoutMessage: true } });
    try {
      const report = await run(fixture, 'contract', { only: ['avatars.failed-has-error', 'videos.failed-has-error'] });

      expect(failures(report).map((f) => f.split(':')[0]).sort()).toEqual(['avatars.failed-has-error (ND-SANDBOX-FAILURE)', 'videos.failed-has-error (ND-SANDBOX-FAILURE)']);
      expect(report.results.find((r) => r.id === 'videos.failed-has-error')?.failure?.received).toBe('{"code":"sandbox_forced_failure"}');
    } finally {
      await fixture.close();
    }
  }, 60_000);
});
