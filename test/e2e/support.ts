// Shared by the end-to-end runs of the conformance runner: accounts for a run and a
// readable account of what failed.
import { expect } from 'vitest';
import type { Report } from '../../conformance/src/run.ts';
import { createAccount, createWorkspace } from '../../server/src/domain/accounts.ts';
import type { Clock } from '../../server/src/domain/clock.ts';
import type { Store } from '../../server/src/domain/ports.ts';

export interface RunKeys {
  apiKey: string;
  signingSecret: string;
  secondKey: string;
  emptyKey: string;
  workspaceKey: string;
  ownerKey: string;
}

/** The accounts a run needs: one with credits, another one, an empty one, and an owner account with a workspace. */
export async function keysForRun(store: Store, clock: Clock): Promise<RunKeys> {
  const main = await createAccount(store, clock, { name: 'conformance', monthlyCredits: 1000 });
  const second = await createAccount(store, clock, { name: 'conformance second', monthlyCredits: 1000 });
  const empty = await createAccount(store, clock, { name: 'conformance empty', monthlyCredits: 0 });
  const owner = await createAccount(store, clock, { name: 'conformance owner', monthlyCredits: 100 });
  const workspace = await createWorkspace(store, clock, owner.account_id, { name: 'conformance workspace', monthlyCredits: 100 });
  return { apiKey: main.api_key, signingSecret: main.signing_secret, secondKey: second.api_key, emptyKey: empty.api_key, workspaceKey: workspace.api_key, ownerKey: owner.api_key };
}

/** Asserts a passing run, printing every check that did not pass when it fails. */
export function expectPass(report: Report): void {
  const notPassed = report.results
    .filter((r) => r.outcome === 'failed' || (r.required && r.outcome === 'skipped'))
    .map((r) => `${r.id} [${r.outcome}] ${r.reason ?? ''} ${r.failure ? JSON.stringify(r.failure).slice(0, 800) : ''}`);
  expect(notPassed, notPassed.join('\n')).toEqual([]);
  expect(report.verdict).toBe('pass');
  expect(report.counts.failed).toBe(0);
  expect(report.counts.requiredNotRun).toBe(0);
  expect(report.counts.passed).toBeGreaterThan(30);
}

/** The checks that can only be seen with a sandbox clock: a day, a month, the whole retry schedule. */
export const CLOCK_CHECKS = ['rate-limits.daily-windows', 'webhooks.retry-schedule', 'credits.monthly-quota'];

/** Asserts that the run judged a workspace's job: its own balance charged, its owner's untouched. */
export function expectWorkspaceChecked(report: Report): void {
  const result = report.results.find((r) => r.id === 'credits.workspace-charged');
  expect(`${result?.outcome}${result?.reason ? ` (${result.reason})` : ''}`).toBe('passed');
}

/**
 * The check that spends a whole day of each bucket: against this server, ten thousand
 * reads, most of a full run's CPU. What it proves does not change with the profile, so
 * where one server is run in several profiles, one run judges it and the others leave it out.
 */
export const SPENDS_DAYS = 'rate-limits.daily-windows';

/** Asserts that the run used the server's sandbox clock: the clock checks ran and passed, but those it was told to leave out. */
export function expectClockChecked(report: Report, leftOut: readonly string[] = []): void {
  const expected = CLOCK_CHECKS.filter((id) => !leftOut.includes(id));
  expect(report.results.filter((r) => CLOCK_CHECKS.includes(r.id)).map((r) => `${r.id}: ${r.outcome}${r.reason ? ` (${r.reason})` : ''}`)).toEqual(expected.map((id) => `${id}: passed`));
}
