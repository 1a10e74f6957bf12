// The correct fixture passes every profile: the runner does not cry wolf.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFixture, type Fixture } from './fixtures/reference.ts';
import { failures, outcomes, run } from './helpers.ts';

describe('the runner against a correct implementation', () => {
  let sandbox: Fixture;
  let production: Fixture;
  beforeAll(async () => {
    sandbox = await startFixture();
    production = await startFixture({ config: { mode: 'production' } });
  });
  afterAll(async () => {
    await sandbox.close();
    await production.close();
  });

  it.concurrent.each(['contract', 'core'] as const)('when run in the %s profile, then every check passes and the exit code is 0', async (profile) => {
    // Each profile gets its own fixture: runs use up the keys' windows.
    const fixture = await startFixture();
    try {
      const report = await run(fixture, profile);
      expect(failures(report)).toEqual([]);
      expect(outcomes(report, 'skipped')).toEqual([]);
      expect(report.verdict).toBe('pass');
      expect(report.exitCode).toBe(0);
      expect(report.counts.passed).toBeGreaterThan(profile === 'contract' ? 45 : 38);
      // The fixture sends the IETF draft's fields, so they are judged, not found absent.
      expect(report.results.find((r) => r.id === 'rate-limits.structured-fields-agree')?.outcome).toBe('passed');
      // Every black-box clause was proven in the run, not just listed.
      const unproven = report.clauses.filter((c) => c.observe.includes('B') && c.outcome !== 'passed' && c.id !== 'WH-HTTPS-PUBLIC');
      expect(unproven.map((c) => `${c.id}: ${c.outcome}`)).toEqual([]);
      // The budget stated before the run held: what the balances say it spent is within it.
      expect(report.budget?.spent?.credits).toBeGreaterThan(0);
      expect(report.budget!.spent!.credits).toBeLessThanOrEqual(report.budget!.planned.credits!);
    } finally {
      await fixture.close();
    }
  }, 60_000);

  it('when the account is opted in to Standard Webhooks and the run is told so, then both signatures are checked and pass; untold, the new check is not applicable', async () => {
    const fixture = await startFixture({ config: { standardWebhooks: true } });
    try {
      const only = ['webhooks.signature', 'webhooks.standard-signature'];
      const told = await run(fixture, 'contract', { standardWebhooks: true, only });
      const untold = await run(fixture, 'contract', { only });
      const outcome = (report: typeof told, id: string) => report.results.find((r) => r.id === id)?.outcome;

      expect(failures(told)).toEqual([]);
      expect(outcome(told, 'webhooks.signature')).toBe('passed');
      expect(outcome(told, 'webhooks.standard-signature')).toBe('passed');
      expect(outcome(untold, 'webhooks.signature')).toBe('passed');
      expect(outcome(untold, 'webhooks.standard-signature')).toBe('not_applicable');
    } finally {
      await fixture.close();
    }
  }, 60_000);

  it('when a job’s webhook arrives, then the job is read at once, not after the pause the polling backoff is in', async () => {
    // Jobs of 0.7 s, polled first at once and then only after 20 s: the ready avatar and its
    // video are each read again when their webhook comes.
    const fixture = await startFixture();
    try {
      const report = await run(fixture, 'core', { only: ['videos.ready-has-url'], pollInitialDelayMs: 20_000, pollMaxDelayMs: 20_000, jobTimeoutSeconds: 60 });

      expect(failures(report)).toEqual([]);
      expect(report.results.find((r) => r.id === 'videos.ready-has-url')?.outcome).toBe('passed');
      expect(report.durationMs).toBeLessThan(20_000);
    } finally {
      await fixture.close();
    }
  }, 90_000);

  it('when the answers of the run’s creates come back after their jobs ended (a slow path), then more creates are made until one is seen pending, and every check passes', async () => {
    // The run makes four avatars and three videos on the main key before this check judges
    // (the one asked of an avatar not ready yet is accepted: by its late answer the avatar
    // was ready): all of them, and the first extra avatar, are answered late; the next
    // ones at once.
    const fixture = await startFixture({ config: { lateAnswers: { avatar: 5, avatar_video: 3 } } });
    try {
      const notes: string[] = [];
      const report = await run(fixture, 'contract', { onProgress: (event) => void (event.type === 'note' && notes.push(event.message)) });
      expect(failures(report)).toEqual([]);
      expect(outcomes(report, 'skipped')).toEqual([]);
      const judged = notes.filter((note) => note.startsWith('avatars.create-returns-at-once:'));
      // The two kinds are judged at once: their notes come in either order.
      expect(judged, judged.join('\n')).toHaveLength(2);
      expect(judged).toEqual(
        expect.arrayContaining([
          expect.stringMatching(/every avatar of the run was done at its first read; the extra extra-avatar-2 was (queued|processing) at its first read/),
          expect.stringMatching(/every avatar_video of the run was done at its first read; the extra extra-video-1 was (queued|processing) at its first read/),
        ]),
      );
      expect(report.verdict).toBe('pass');
    } finally {
      await fixture.close();
    }
  }, 60_000);

  it('when every create answer comes back late and the account has no credits for one more, then the check is not run, saying why, rather than failed', async () => {
    // Every create of the main account is answered after its job ended, and 80 credits
    // (what preflight asks for) are spent by the run's own jobs before an extra video.
    const fixture = await startFixture({ config: { lateAnswers: { avatar: 99, avatar_video: 99 }, mainQuota: 80 } });
    try {
      const report = await run(fixture, 'contract', { only: ['avatars.create-returns-at-once'] });
      expect(failures(report)).toEqual([]);
      expect(outcomes(report, 'skipped')).toEqual([
        expect.stringMatching(/^avatars\.create-returns-at-once: every avatar(_video)? of the run was already done at its first read, and (no further one|only \d more) could be made to tell a slow way to the service from an answer that waits for generation: POST \/v1\/avatar(s|-videos) answered 402/),
      ]);
      expect(report.verdict).toBe('fail');
    } finally {
      await fixture.close();
    }
  }, 60_000);

  it('when run in the mock profile, then the stateless checks pass and the stateful ones are not applicable', async () => {
    const report = await run(sandbox, 'mock');
    expect(failures(report)).toEqual([]);
    expect(report.verdict).toBe('pass');
    const na = outcomes(report, 'not_applicable');
    expect(na).toContain('states.terminal-never-changes: not part of the mock profile');
    expect(na).toContain('rate-limits.over-limit-429: not part of the mock profile');
  }, 60_000);

  it('when a production deployment is run in the production profile, then it refuses non-public webhook URLs and passes', async () => {
    const report = await run(production, 'production');
    expect(failures(report)).toEqual([]);
    expect(outcomes(report, 'skipped')).toEqual([]);
    expect(report.results.find((r) => r.id === 'webhooks.https-public-only')?.outcome).toBe('passed');
    expect(report.verdict).toBe('pass');
  }, 60_000);
});
