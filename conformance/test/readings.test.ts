// The matrix of correct readings: the source leaves open how a rate-limit window counts
// ("10 requests per minute" and no more) and which fields an answer carries beyond the
// RateLimit-* trio. Each variant of the independent implementation reads one of those
// points otherwise, as outside implementations do, and must pass the core profile
// through its own profile file, which says no more than its makers would; and its
// broken variants must still fail on the rule they break, whatever the reading.
import { describe, expect, it, vi } from 'vitest';
import type { ImplementationProfile } from '../src/implementation/profile.ts';
import { runConformance } from '../src/run.ts';
import { startIndependent, type IndependentConfig, type IndependentFlaws, type WindowKind } from './fixtures/independent.ts';
import { failures, independentProfileWith, INDEPENDENT_PROFILE, optionsForIndependent } from './helpers.ts';

vi.setConfig({ maxConcurrency: 10 });

/** The runs wait on timers (jobs, windows), so they share the CPU; a loaded machine slows them all. */
const CONCURRENT_RUN_MS = 240_000;

/** The fixture's limits with another way of counting the window. */
function counted(window: WindowKind, more: Partial<IndependentConfig['limits']> = {}): Partial<IndependentConfig> {
  return { limits: { generation: 15, read: 150, windowMs: 4000, window, ...more } };
}

interface Reading {
  name: string;
  config: Partial<IndependentConfig>;
  /** What its profile says beyond the independent implementation's file; absent: the file alone. */
  profile?: ImplementationProfile;
  /** The check that judges what this reading sends, which must pass, not merely not apply. */
  judgedBy?: string;
}

const READINGS: readonly Reading[] = [
  { name: 'fixed windows aligned on the clock', config: counted('clock') },
  { name: 'a sliding log (the requests admitted in the last window)', config: counted('sliding-log') },
  { name: 'a sliding log its profile states', config: counted('sliding-log'), profile: independentProfileWith({ name: 'Independent avatars, sliding windows', rate_limits: { window: 'sliding' } }) },
  // RateLimit-Reset read as the seconds until the window holds nothing of the key's.
  { name: 'a sliding log whose Reset is until the window is empty', config: counted('sliding-log-until-empty', { generation: 10, read: 120, windowMs: 12_000 }) },
  { name: 'a sliding-window counter (the last window weighted, and the current one)', config: counted('sliding-counter') },
  { name: 'a token bucket refilled evenly over the window', config: counted('token-bucket') },
  // Windows that outlast the run's first phase: the key taken over its limit still holds
  // the requests of that phase, which leave one at a time while the checks observe it.
  { name: 'a sliding log of long windows', config: counted('sliding-log', { generation: 10, read: 120, windowMs: 12_000 }) },
  { name: 'a sliding-window counter of long windows', config: counted('sliding-counter', { generation: 10, read: 120, windowMs: 12_000 }) },
  { name: 'RateLimit-Policy in an earlier IETF draft\'s syntax, unclaimed', config: { rateLimitPolicy: 'older-draft' } },
  // Revisions 10 and 11 of the draft write the fields alike: a service written to 10 keeps
  // passing whether its profile claims 10 or, as the contract does, 11.
  {
    name: 'RateLimit-Policy and RateLimit as revision 10 writes them, claimed as revision 10',
    config: { rateLimitPolicy: 'ietf-draft-10' },
    profile: independentProfileWith({ name: 'Independent avatars, claiming revision 10', rate_limits: { fields: 'ietf-draft-10' } }),
    judgedBy: 'rate-limits.structured-fields-agree',
  },
  {
    name: 'RateLimit-Policy and RateLimit as revision 10 writes them, claimed as revision 11',
    config: { rateLimitPolicy: 'ietf-draft-10' },
    profile: independentProfileWith({ name: 'Independent avatars, claiming revision 11', rate_limits: { fields: 'ietf-draft-11' } }),
    judgedBy: 'rate-limits.structured-fields-agree',
  },
];

interface BrokenReading {
  name: string;
  config: Partial<IndependentConfig>;
  flaws: Partial<IndependentFlaws>;
  clause: string;
  catches: string;
  profile?: ImplementationProfile;
}

const BROKEN_READINGS: readonly BrokenReading[] = [
  { name: 'one sliding log for all keys', config: counted('sliding-log'), flaws: { sharedRateLimit: true }, clause: 'RL-PER-KEY', catches: 'rate-limits.per-key' },
  { name: 'reads counted in the generation bucket of a sliding-window counter', config: counted('sliding-counter'), flaws: { readsCountAsGeneration: true }, clause: 'RL-BUCKETS', catches: 'rate-limits.buckets' },
  { name: 'a sliding-window counter whose Remaining goes up as the key spends', config: counted('sliding-counter'), flaws: { remainingGoesUp: true }, clause: 'RL-HEADERS', catches: 'rate-limits.headers-on-answers' },
  { name: 'a sliding log whose Retry-After is longer than the window', config: counted('sliding-log'), flaws: { retryAfterBeyondWindow: true }, clause: 'RL-429', catches: 'rate-limits.over-limit-429' },
  { name: 'clock windows whose 429 has no Retry-After', config: counted('clock'), flaws: { noRetryAfter: true }, clause: 'RL-429', catches: 'rate-limits.over-limit-429' },
  {
    name: 'RateLimit-Policy in an earlier draft\'s syntax, where the profile claims revision 10',
    config: { rateLimitPolicy: 'older-draft' },
    flaws: {},
    clause: 'ND-RATELIMIT-FIELDS',
    catches: 'rate-limits.structured-fields-agree',
    profile: independentProfileWith({ name: 'Independent avatars, claiming the draft\'s fields', rate_limits: { fields: 'ietf-draft-10' } }),
  },
  {
    name: 'RateLimit-Policy in an earlier draft\'s syntax, where the profile claims revision 11',
    config: { rateLimitPolicy: 'older-draft' },
    flaws: {},
    clause: 'ND-RATELIMIT-FIELDS',
    catches: 'rate-limits.structured-fields-agree',
    profile: independentProfileWith({ name: 'Independent avatars, claiming revision 11', rate_limits: { fields: 'ietf-draft-11' } }),
  },
];

describe('the runner against correct implementations that read the open points otherwise', () => {
  it.concurrent.each(READINGS.map((reading) => [reading.name, reading] as const))('when it counts with %s, then core passes through its profile', async (_name, reading) => {
    const fixture = await startIndependent({ config: reading.config });
    try {
      const report = await runConformance(optionsForIndependent(fixture, 'core', { implementation: reading.profile ?? INDEPENDENT_PROFILE }));

      expect(failures(report)).toEqual([]);
      // Nothing required left unconcluded: a check that could not conclude is the runner's defect.
      expect(report.results.filter((r) => r.required && r.outcome === 'skipped').map((r) => `${r.id}: ${r.reason}`)).toEqual([]);
      expect(report.verdict).toBe('pass');
      expect(report.exitCode).toBe(0);
      if (reading.judgedBy) expect(report.results.find((r) => r.id === reading.judgedBy)?.outcome).toBe('passed');
    } finally {
      await fixture.close();
    }
  }, CONCURRENT_RUN_MS);

  it.concurrent.each(BROKEN_READINGS.map((broken) => [broken.name, broken] as const))('when it has %s, then it is caught by the rule it breaks', async (_name, broken) => {
    const fixture = await startIndependent({ config: broken.config, flaws: broken.flaws });
    try {
      const report = await runConformance(optionsForIndependent(fixture, 'core', { implementation: broken.profile ?? INDEPENDENT_PROFILE }));

      // The whole failures in the message: a second check that fails now and then must say why.
      expect(failures(report).map((f) => f.split(':')[0]), failures(report).join('\n')).toEqual([`${broken.catches} (${broken.clause})`]);
      expect(report.exitCode).toBe(1);
    } finally {
      await fixture.close();
    }
  }, CONCURRENT_RUN_MS);
});
