// The credit checks judge what the source says and what GET /v1/me shows: a month's
// one-off grant is not a quota the next month owes, and a balance shown in part is
// judged in that part.
import { describe, expect, it } from 'vitest';
import type { Exchange } from '../src/http.ts';
import { CONTRACT_PROFILE, parseProfile } from '../src/implementation/profile.ts';
import { Shape } from '../src/implementation/shape.ts';
import { chargedAt } from '../src/observe/ledger.ts';
import type { Report } from '../src/report/model.ts';
import type { TrackedJob } from '../src/world.ts';
import { startFixture, type Fixture } from './fixtures/reference.ts';
import { run } from './helpers.ts';

const CREDIT_CHECKS = ['credits.reserved-on-accept', 'credits.reads-are-free', 'credits.account-charged', 'credits.402-starts-nothing', 'credits.webhook-failures-change-nothing', 'credits.monthly-quota', 'credits.workspace-charged'];

/** The contract's choices, but a /v1/me that shows available and reserved and not used. */
const WITHOUT_USED = parseProfile({
  profile: 1,
  name: 'the contract without used credits',
  account: { credits: { available: '/credits/available', reserved: '/credits/reserved' } },
  clock: { advance: { path: CONTRACT_PROFILE.clock!.advance.path, body: { seconds: '{{seconds}}' } } },
});

function outcome(report: Report, id: string): string {
  const result = report.results.find((r) => r.id === id);
  return `${result?.outcome}${result?.reason ? `: ${result.reason}` : ''}${result?.failure ? `: ${result.failure.message} (${result.failure.received ?? ''})` : ''}`;
}

async function withFixture<T>(options: Parameters<typeof startFixture>[0], work: (fixture: Fixture) => Promise<T>): Promise<T> {
  const fixture = await startFixture(options);
  try {
    return await work(fixture);
  } finally {
    await fixture.close();
  }
}

async function available(fixture: Fixture): Promise<unknown> {
  const response = await fetch(`${fixture.baseUrl}/v1/me`, { headers: { authorization: `Bearer ${fixture.keys.main}` } });
  return ((await response.json()) as { credits: { available: number } }).credits.available;
}

describe('the monthly quota', () => {
  it('when the account had a one-off grant for the month of the run, then the next month starting with the quota alone passes', async () => {
    await withFixture({ config: { grants: { main: 100 } } }, async (fixture) => {
      // The grant is in this month's balance: after the run's 50 credits, 1,050 are left,
      // more than the 1,000 the next month starts with.
      expect(await available(fixture)).toBe(1100);

      const report = await run(fixture, 'core', { only: ['credits.monthly-quota'] });

      expect(outcome(report, 'credits.monthly-quota')).toBe('passed');
      expect(await available(fixture)).toBe(1000);
    });
  }, 60_000);

  it('when /v1/me does not show the credits used, then the monthly quota is not applicable and says why', async () => {
    await withFixture({}, async (fixture) => {
      const report = await run(fixture, 'core', { only: ['credits.monthly-quota'], implementation: WITHOUT_USED });

      expect(outcome(report, 'credits.monthly-quota')).toMatch(/^not_applicable: needs the credits used.*does not name used \(account\.credits\)/);
    });
  }, 60_000);
});

describe('a balance shown in part', () => {
  it('when /v1/me shows available and reserved only, then each credit check runs on them and passes', async () => {
    await withFixture({}, async (fixture) => {
      const report = await run(fixture, 'core', { only: CREDIT_CHECKS, implementation: WITHOUT_USED });

      expect(CREDIT_CHECKS.map((id) => `${id}: ${outcome(report, id)}`)).toEqual(
        CREDIT_CHECKS.map((id) => (id === 'credits.monthly-quota' ? expect.stringMatching(/^credits\.monthly-quota: not_applicable: needs the credits used/) : `${id}: passed`)),
      );
    });
  }, 60_000);

  it('when reads are charged and /v1/me shows no used credits, then the charge is still seen in available', async () => {
    await withFixture({ flaws: { chargeReads: true } }, async (fixture) => {
      const report = await run(fixture, 'core', { only: ['credits.reads-are-free'], implementation: WITHOUT_USED });

      expect(outcome(report, 'credits.reads-are-free')).toMatch(/^failed: 5 reads changed the balance \(available\)/);
    });
  }, 60_000);

  it('when the profile names no balance at all, then the credit checks that need one are not applicable', async () => {
    await withFixture({}, async (fixture) => {
      const report = await run(fixture, 'core', { only: ['credits.reads-are-free', 'credits.reserved-on-accept'], implementation: parseProfile({ profile: 1, account: { credits: null } }) });

      expect(outcome(report, 'credits.reads-are-free')).toMatch(/^not_applicable: needs a credit balance, and the implementation profile names no balance \(account\.credits is null\)/);
      expect(outcome(report, 'credits.reserved-on-accept')).toMatch(/^not_applicable: needs available, or reserved and used together/);
    });
  }, 60_000);
});

describe('what a key\'s jobs cost as of a balance read', () => {
  /** A job of the run as the world tracks it: created at `created`, seen ended at `ended` (runner clock). */
  const job = (key: TrackedJob['key'], kind: TrackedJob['kind'], created: number, ended?: [number, 'ready' | 'failed']) =>
    ({ key, kind, id: `${kind}-${created}`, create: { startedAt: created, durationMs: 5 }, terminalAt: ended?.[0], ended: ended?.[1] }) as unknown as TrackedJob;
  const read = { startedAt: 1000, durationMs: 10 } as Exchange;

  it('when jobs ended before the read, ran across it or came after it, then only the first are final and the second may be off by their price', () => {
    const jobs = [
      job('second', 'avatar', 100, [500, 'ready']),
      job('second', 'avatar', 150, [400, 'failed']),
      job('second', 'avatar_video', 200, [1500, 'ready']),
      job('second', 'avatar', 900),
      job('second', 'avatar', 1005),
      job('second', 'avatar', 2000, [2500, 'ready']),
      job('main', 'avatar', 100, [500, 'ready']),
    ];

    expect(chargedAt(new Shape(CONTRACT_PROFILE), jobs, 'second', read)).toEqual({ settled: 10, unsettled: 40 });
  });

  it('when no price is known, then neither part is', () => {
    const jobs = [job('second', 'avatar', 100, [500, 'ready']), job('second', 'avatar', 900)];

    expect(chargedAt(new Shape({ ...CONTRACT_PROFILE, prices: null, records: { ...CONTRACT_PROFILE.records, credits: null } }), jobs, 'second', read)).toEqual({ settled: undefined, unsettled: undefined });
  });
});
