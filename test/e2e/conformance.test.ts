// The conformance runner against this project's own server, on the embedded store, in
// the core and the contract profiles: every required check passes, and with the server's
// sandbox clock the daily windows, the month and the whole retry schedule pass too. The two
// runs share one server and use separate accounts, so their limits do not meet.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runConformance } from '../../conformance/src/run.ts';
import { periodOf } from '../../server/src/domain/credits.ts';
import { startTestService, type TestService } from '../../server/test/support/harness.ts';
import { expectClockChecked, expectPass, expectWorkspaceChecked, keysForRun, SPENDS_DAYS } from './support.ts';

let svc: TestService;

beforeAll(async () => {
  svc = await startTestService({ env: { ENGINE_AVATAR_MS: '200', ENGINE_VIDEO_MS: '200', JOB_POLL_MS: '50', WEBHOOK_POLL_MS: '100' } });
});
afterAll(() => svc?.dispose());

describe.concurrent('the conformance runner against the server on the embedded store', () => {
  it.each([['core'], ['contract']] as const)('passes the %s profile', async (profile) => {
    const keys = await keysForRun(svc.store, svc.domain.clock);

    // The day of each bucket is spent once per server, in the contract run.
    const leftOut = profile === 'core' ? [SPENDS_DAYS] : [];

    const report = await runConformance({ baseUrl: svc.url, ...keys, profile, skip: leftOut });

    expectPass(report);
    expectClockChecked(report, leftOut);
    expectWorkspaceChecked(report);
  }, 240_000);

  it('checks both signatures of an account opted in to Standard Webhooks, and the structured rate-limit fields against the trio, and both pass', async () => {
    const keys = await keysForRun(svc.store, svc.domain.clock);
    const me = await svc.request('GET', '/v1/me', { key: keys.apiKey });
    // As `npm run admin -- set-standard-webhooks --on` does it.
    await svc.store.accounts.setStandardWebhooks(me.body.account_id, true);
    const only = ['webhooks.signature', 'webhooks.standard-signature', 'rate-limits.structured-fields-agree'];

    const report = await runConformance({ baseUrl: svc.url, ...keys, profile: 'contract', standardWebhooks: true, only });

    expect(report.results.filter((r) => only.includes(r.id)).map((r) => `${r.id}: ${r.outcome}${r.failure ? ` ${r.failure.message}` : ''}`).sort()).toEqual(only.map((id) => `${id}: passed`).sort());
  }, 120_000);

  it('passes the monthly quota when the account had a one-off grant for the month of the run', async () => {
    const keys = await keysForRun(svc.store, svc.domain.clock);
    const me = await svc.request('GET', '/v1/me', { key: keys.apiKey });
    // An operator's bonus for this month alone, as `npm run admin -- grant-credits` gives it.
    await svc.store.accounts.grantCredits(me.body.account_id, periodOf(svc.domain.clock.now()), 100);
    expect((await svc.request('GET', '/v1/me', { key: keys.apiKey })).body.credits.available).toBe(1100);

    const report = await runConformance({ baseUrl: svc.url, ...keys, profile: 'core', only: ['credits.monthly-quota'] });

    const result = report.results.find((r) => r.id === 'credits.monthly-quota');
    expect(`${result?.outcome} ${result?.failure?.received ?? result?.reason ?? ''}`.trim()).toBe('passed');
  }, 120_000);
});
