// Runs the runner in process against a fixture, with timings scaled to the fixture.
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { loadProfile, merge, parseProfile, type Json } from '../src/implementation/profile.ts';
import type { RunOptions } from '../src/options.ts';
import type { Profile } from '../src/outcome.ts';
import { runConformance } from '../src/run.ts';
import type { Report } from '../src/report/model.ts';
import type { IndependentFixture } from './fixtures/independent.ts';
import { DEFAULT_CONFIG, SECRET, type Fixture } from './fixtures/reference.ts';

/** Enough for any selection of a fixture's production run: the fixture's accounts are not billed. */
export const PRODUCTION_MAX_CREDITS = 100_000;

export function optionsFor(fixture: Fixture, profile: Profile, extra: Partial<RunOptions> = {}): RunOptions {
  return {
    baseUrl: fixture.baseUrl,
    apiKey: fixture.keys.main,
    secondKey: fixture.keys.second,
    emptyKey: fixture.keys.empty,
    workspaceKey: fixture.keys.workspace,
    ownerKey: fixture.keys.owner,
    signingSecret: SECRET,
    profile,
    jobTimeoutSeconds: 10,
    pollInitialDelayMs: 50,
    pollMaxDelayMs: 200,
    terminalObserveSeconds: 0.6,
    webhookFirstRetrySeconds: fixture.config.webhookRetryDelaysMs[0]! / 1000,
    webhookRetryTimeoutSeconds: 3,
    // The schedule the fixture documents, whatever a broken fixture does instead.
    webhookRetries: { delaysSeconds: DEFAULT_CONFIG.webhookRetryDelaysMs.map((ms) => ms / 1000), jitter: 0 },
    expectedLimits: {
      generation: [fixture.config.limits.generation, fixture.config.limits.day.generation],
      read: [fixture.config.limits.read, fixture.config.limits.day.read],
    },
    windowSeconds: [fixture.config.limits.windowMs / 1000, 86_400],
    // Production refuses the runner's loopback receiver and has no fail trigger: leave
    // out what needs them (a real production run passes --receiver-public-url instead).
    // A production run is on a live key: it must be told the most it may spend.
    ...(profile === 'production' ? { skip: ['receiver', 'fail-trigger'], maxCredits: PRODUCTION_MAX_CREDITS } : {}),
    ...extra,
  };
}

export async function run(fixture: Fixture, profile: Profile, extra: Partial<RunOptions> = {}): Promise<Report> {
  return runConformance(optionsFor(fixture, profile, extra));
}

/** "id (clause): message" of every failed check, for readable assertion diffs. */
export function failures(report: Report): string[] {
  return report.results.filter((r) => r.outcome === 'failed').map((r) => `${r.id} (${r.failure?.clause}): ${r.failure?.message}`);
}

export function outcomes(report: Report, outcome: string): string[] {
  return report.results.filter((r) => r.outcome === outcome).map((r) => `${r.id}${r.reason ? `: ${r.reason}` : ''}`);
}

const INDEPENDENT_PROFILE_FILE = new URL('../examples/independent.profile.yaml', import.meta.url).pathname;

/** The independent implementation, driven through its profile file and nothing else. */
export const INDEPENDENT_PROFILE = loadProfile(INDEPENDENT_PROFILE_FILE);

/**
 * Its profile file with what its problem-types variant does otherwise (the fixture's
 * problemTypes and balanceInMe): the code is the last segment of the problem's type
 * URI, and /v1/me shows credits available and reserved, not used.
 */
export const INDEPENDENT_PROBLEMS_PROFILE = independentProfileWith({
  name: 'Independent avatars, RFC 9457 problem types (test implementation)',
  errors: { code: { pointer: '/type', form: 'uri' } },
  account: { credits: { available: '/credits/available', reserved: '/credits/reserved' } },
});

/** Its profile file with some members said otherwise, as a variant of it would state them. */
export function independentProfileWith(over: Json): ReturnType<typeof parseProfile> {
  return parseProfile(merge(parseYaml(readFileSync(INDEPENDENT_PROFILE_FILE, 'utf8')) as Json, over), `the profile of ${String(over.name ?? 'a variant')}`);
}

export function optionsForIndependent(fixture: IndependentFixture, profile: Profile, extra: Partial<RunOptions> = {}): RunOptions {
  const { limits, retryDelaysMs } = fixture.config;
  return {
    baseUrl: fixture.baseUrl,
    apiKey: fixture.keys.main,
    secondKey: fixture.keys.second,
    emptyKey: fixture.keys.empty,
    signingSecret: fixture.config.signingSecret,
    profile,
    implementation: INDEPENDENT_PROFILE,
    jobTimeoutSeconds: 10,
    pollInitialDelayMs: 50,
    pollMaxDelayMs: 200,
    terminalObserveSeconds: 0.6,
    webhookFirstRetrySeconds: retryDelaysMs[0]! / 1000,
    webhookRetryTimeoutSeconds: 3,
    expectedLimits: { generation: [limits.generation], read: [limits.read] },
    windowSeconds: [limits.windowMs / 1000],
    // A production run is on a live key: it must be told the most it may spend.
    ...(profile === 'production' ? { skip: ['receiver', 'fail-trigger'], maxCredits: PRODUCTION_MAX_CREDITS } : {}),
    ...extra,
  };
}
