// The runner against an implementation that decided every "not shown" item its own way
// (fixtures/independent.ts), driven only by its profile file: it passes the core
// profile, and each of its broken variants is caught by the check naming the clause.
import { describe, expect, it, vi } from 'vitest';
import { runConformance } from '../src/run.ts';
import { INDEPENDENT_BROKEN } from './fixtures/independent-broken.ts';
import { startIndependent } from './fixtures/independent.ts';
import { failures, INDEPENDENT_PROBLEMS_PROFILE, optionsForIndependent, outcomes } from './helpers.ts';

vi.setConfig({ maxConcurrency: 10 });

/** Its broken variants run ten at a time in one process: as in broken.test.ts, slow on a loaded machine. */
const CONCURRENT_RUN_MS = 180_000;

describe.concurrent('the runner against an independent implementation', () => {
  it('when run in the core profile with its profile file, then every check passes, duplicates included', async () => {
    const fixture = await startIndependent();
    try {
      const report = await runConformance(optionsForIndependent(fixture, 'core'));

      expect(failures(report)).toEqual([]);
      // What needs a sandbox clock, which it does not have: not run, not required.
      expect(outcomes(report, 'skipped').map((s) => s.split(':')[0]).sort()).toEqual(['credits.monthly-quota', 'rate-limits.daily-windows', 'webhooks.retry-schedule']);
      // And what its profile says it cannot show: no balances in /v1/me.
      expect(outcomes(report, 'not_applicable').filter((s) => s.includes('account.credits')).map((s) => s.split(':')[0]).sort()).toEqual(['credits.account-charged', 'credits.reads-are-free', 'credits.reserved-on-accept']);
      const clockChecks = report.results.filter((r) => ['credits.monthly-quota', 'rate-limits.daily-windows', 'webhooks.retry-schedule'].includes(r.id));
      expect(clockChecks.map((r) => `${r.required}: ${r.reason}`)).toEqual(Array(3).fill('false: needs a sandbox clock: the implementation profile names no sandbox clock'));
      expect(report.verdict).toBe('pass');
      expect(report.exitCode).toBe(0);
      // Production-only, and the clauses whose credit checks need balances in /v1/me
      // (AUTH-ACCOUNT is proven by auth.other-account-hidden; the ledger half is skipped).
      const unproven = report.clauses.filter((c) => c.observe.includes('B') && c.outcome !== 'passed' && !['WH-HTTPS-PUBLIC', 'CR-RESERVE', 'CR-ACCOUNT', 'CR-READ-FREE', 'AUTH-ACCOUNT', 'CR-MONTHLY-QUOTA'].includes(c.id));
      expect(unproven.map((c) => `${c.id}: ${c.outcome}`)).toEqual([]);
    } finally {
      await fixture.close();
    }
  }, 60_000);

  it('when its refusals are RFC 9457 problems whose type URI ends in the code and /v1/me shows no credits used, then it passes with a profile that says so', async () => {
    const fixture = await startIndependent({ config: { problemTypes: true, balanceInMe: true } });
    try {
      const report = await runConformance(optionsForIndependent(fixture, 'core', { implementation: INDEPENDENT_PROBLEMS_PROFILE }));

      expect(failures(report)).toEqual([]);
      // The codes were found in the type URIs, and the credit checks ran on available and reserved.
      const ran = ['credits.insufficient-credits-402', 'rate-limits.over-limit-429', 'credits.reserved-on-accept', 'credits.reads-are-free', 'credits.account-charged', 'credits.webhook-failures-change-nothing'];
      expect(ran.map((id) => `${id}: ${report.results.find((r) => r.id === id)?.outcome}`)).toEqual(ran.map((id) => `${id}: passed`));
      expect(report.verdict).toBe('pass');
    } finally {
      await fixture.close();
    }
  }, 60_000);

  it('when its problem type URIs end in another code than the source\'s, then the 402 check fails naming where the code was sought', async () => {
    const fixture = await startIndependent({ config: { problemTypes: true, balanceInMe: true }, flaws: { wrongCreditsCode: true } });
    try {
      const report = await runConformance(optionsForIndependent(fixture, 'core', { implementation: INDEPENDENT_PROBLEMS_PROFILE, only: ['credits', 'rate-limits.over-limit-429'] }));

      expect(failures(report)).toEqual(['credits.insufficient-credits-402 (CR-402): the 402 does not carry the code insufficient_credits']);
      expect(report.results.find((r) => r.id === 'credits.insufficient-credits-402')?.failure?.expected).toBe('a URI ending in /insufficient_credits at /type');
    } finally {
      await fixture.close();
    }
  }, 60_000);

  it('when generated inputs are sent in its own spelling, then it passes by the source rules alone', async () => {
    const fixture = await startIndependent();
    try {
      // It has no sandbox clock: its windows are waited out, so the count is kept small.
      const report = await runConformance(optionsForIndependent(fixture, 'core', { only: ['generated'], fuzz: 40, seed: 3 }));

      expect(report.results.map((r) => `${r.id}: ${r.outcome}${r.failure ? ` ${r.failure.message}` : ''}`)).toEqual(['generated.creates: passed', 'generated.reads: passed']);
    } finally {
      await fixture.close();
    }
  }, 60_000);

  it('when the contract\'s choices are assumed instead of its profile, then the run cannot even present the key', async () => {
    const fixture = await startIndependent();
    try {
      const { implementation: _profile, ...contract } = optionsForIndependent(fixture, 'core');
      const report = await runConformance(contract);

      expect(report.verdict).toBe('aborted');
      expect(report.abort?.kind).toBe('rejected-key');
      expect(report.abort?.message).toContain('authorization');
    } finally {
      await fixture.close();
    }
  }, 30_000);

  it('when a production deployment is run in the production profile, then it passes without a fail trigger', async () => {
    const fixture = await startIndependent({ config: { mode: 'production' } });
    try {
      const report = await runConformance(optionsForIndependent(fixture, 'production', { implementation: { ...optionsForIndependent(fixture, 'core').implementation!, failure: null } }));

      expect(failures(report)).toEqual([]);
      expect(report.results.find((r) => r.id === 'webhooks.https-public-only')?.outcome).toBe('passed');
      expect(report.verdict).toBe('pass');
    } finally {
      await fixture.close();
    }
  }, 60_000);

  it.concurrent.each(INDEPENDENT_BROKEN.map((broken) => [broken.name, broken] as const))('when it has %s, then it is caught', async (_name, broken) => {
    const fixture = await startIndependent({ flaws: broken.flaws, ...(broken.config ? { config: broken.config } : {}) });
    try {
      const report = await runConformance(optionsForIndependent(fixture, 'core'));

      const failed = report.results.filter((r) => r.outcome === 'failed');
      // The whole failures in the message: a second check that fails now and then must say why.
      expect(failures(report).map((f) => f.split(':')[0]), failures(report).join('\n')).toEqual([`${broken.catches} (${broken.clause})`]);
      expect(failed[0]?.failure?.clause).toBe(broken.clause);
      expect(report.exitCode).toBe(1);
    } finally {
      await fixture.close();
    }
  }, CONCURRENT_RUN_MS);
});
