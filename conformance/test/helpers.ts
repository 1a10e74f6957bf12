// Runs the runner in process against a fixture, with timings scaled to the fixture.
import type { Profile } from '../src/check.ts';
import type { RunOptions } from '../src/options.ts';
import { runConformance } from '../src/run.ts';
import type { Report } from '../src/report/model.ts';
import { SECRET, type Fixture } from './fixtures/reference.ts';

export function optionsFor(fixture: Fixture, profile: Profile, extra: Partial<RunOptions> = {}): RunOptions {
  return {
    baseUrl: fixture.baseUrl,
    apiKey: fixture.keys.main,
    secondKey: fixture.keys.second,
    emptyKey: fixture.keys.empty,
    signingSecret: SECRET,
    profile,
    jobTimeoutSeconds: 10,
    pollInitialDelayMs: 50,
    pollMaxDelayMs: 200,
    terminalObserveSeconds: 0.6,
    webhookFirstRetrySeconds: fixture.config.webhookRetryDelaysMs[0]! / 1000,
    webhookRetryTimeoutSeconds: 3,
    expectedLimits: { generation: [fixture.config.limits.generation, 300], read: [fixture.config.limits.read, 10_000] },
    // Production refuses the runner's loopback receiver and has no fail trigger: leave
    // out what needs them (a real production run passes --receiver-public-url instead).
    ...(profile === 'production' ? { skip: ['receiver', 'fail-trigger'] } : {}),
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
