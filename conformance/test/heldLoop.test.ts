// A run on a machine so loaded that its own timer fires late: the checks still waiting in
// a lane start after the moment the run's bound stands for, before the timer has said so.
// The run's clock is made to jump here as a held event loop makes it jump, so the case
// happens on demand rather than on one CI run in ten.
import { expect, it } from 'vitest';
import { startFixture } from './fixtures/reference.ts';
import { outcomes, run } from './helpers.ts';

it('when the run\'s clock passes its bound before its timer fires, then the checks not yet started are not reached and the run says it reached its bound', async () => {
  const fixture = await startFixture();
  let held = 0;
  const now = () => Date.now() + held;
  try {
    const report = await run(fixture, 'core', {
      only: ['avatars.type-validated', 'avatars.name-required', 'avatars.prompt-required', 'avatars.age-minimum'],
      now,
      // Once the first check is over, the loop "was held" two minutes: past the run's
      // bound (some 30 s for these checks), whose timer, set in real time, has not fired.
      onProgress: (event) => {
        if (event.type === 'check-end' && held === 0) held = 120_000;
      },
    });

    const notReached = outcomes(report, 'skipped').filter((s) => s.endsWith(`not reached: the run reached its bound of ${report.bound?.seconds} s, before it could start`));
    expect(notReached.length, JSON.stringify(report.results.map((r) => [r.id, r.outcome, r.reason]))).toBe(3);
    expect(report.bound?.reached).toBe(true);
    expect(report.verdict).not.toBe('pass');
  } finally {
    await fixture.close();
  }
}, 60_000);
