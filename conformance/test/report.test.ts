// The report a run's results make: the verdict, the counts and the clause matrix, and how
// each format shows an optional check that found a flaw (a warning, which never decides
// the verdict) beside one that decides it.
import { describe, expect, it } from 'vitest';
import type { ResolvedOptions } from '../src/options.ts';
import { buildReport } from '../src/report/build.ts';
import { resultLine, summary } from '../src/report/console.ts';
import { toHtml } from '../src/report/html.ts';
import { toJson } from '../src/report/json.ts';
import { toJunit } from '../src/report/junit.ts';
import { toMarkdown } from '../src/report/markdown.ts';
import type { CheckResult, Report } from '../src/report/model.ts';
import { consoleLegend } from '../src/report/text.ts';

const OPTIONS = { profile: 'core', implementation: { name: 'Some implementation' }, baseUrl: 'http://127.0.0.1:1', now: () => 2_000 } as unknown as ResolvedOptions;

const PASSED: CheckResult = { id: 'auth.key-required', title: 'Requests without a valid API key are refused', area: 'auth', clauses: ['AUTH-KEY'], decisions: [], phase: 'main', required: true, optional: false, outcome: 'passed', durationMs: 5 };

/**
 * A check optional in the run's profile that found another account's record in a list
 * (made by hand: which checks are optional where is the registry's, not the report's).
 */
const WARNED: CheckResult = {
  id: 'lists.each-record-once',
  title: 'Lists page through the account’s own records, each exactly once',
  area: 'lists',
  clauses: ['AUTH-ACCOUNT'],
  decisions: ['ND-LISTS'],
  phase: 'clock',
  required: false,
  optional: true,
  outcome: 'warned',
  failure: { clause: 'AUTH-ACCOUNT', message: 'GET /v1/avatars listed 1 record of another account', expected: 'none', received: 'av_other', exchanges: ['> GET /v1/avatars\n< 200'] },
  durationMs: 7,
};

const FAILED: CheckResult = { ...PASSED, id: 'auth.other-account-hidden', title: 'Another account’s records are hidden', clauses: ['AUTH-ACCOUNT'], outcome: 'failed', failure: { clause: 'AUTH-ACCOUNT', message: 'another account’s avatar was shown', exchanges: [] } };

function reportOf(...results: CheckResult[]): Report {
  return buildReport(OPTIONS, 1_000, results, 3, 0);
}

describe('the verdict', () => {
  it('when only an optional check found a flaw, then the verdict passes with exit 0, and the flaw is counted as a warning, not a failure', () => {
    const report = reportOf(PASSED, WARNED);

    expect(report.verdict).toBe('pass');
    expect(report.exitCode).toBe(0);
    expect(report.counts).toEqual({ passed: 1, failed: 0, warned: 1, skipped: 0, notApplicable: 0, requiredNotRun: 0 });
  });

  it('when a check that decides the verdict failed beside the warning, then the verdict fails with exit 1', () => {
    const report = reportOf(PASSED, WARNED, FAILED);

    expect(report.verdict).toBe('fail');
    expect(report.exitCode).toBe(1);
    expect(report.counts.failed).toBe(1);
    expect(report.counts.warned).toBe(1);
  });

  it('when a required check did not run, then the verdict fails though nothing failed', () => {
    const report = reportOf(WARNED, { ...PASSED, outcome: 'skipped', reason: 'needs --second-key' });

    expect(report.verdict).toBe('fail');
    expect(report.counts.requiredNotRun).toBe(1);
  });

  it('when only an optional check saw a clause broken, then the clause matrix says warned; a failure beside it says failed', () => {
    expect(reportOf(PASSED, WARNED).clauses.find((row) => row.id === 'AUTH-ACCOUNT')?.outcome).toBe('warned');
    expect(reportOf(PASSED, WARNED, FAILED).clauses.find((row) => row.id === 'AUTH-ACCOUNT')?.outcome).toBe('failed');
  });
});

describe('a warning in each format', () => {
  const report = reportOf(PASSED, WARNED);

  it('when shown on the console, then its line has its own mark and [optional], the legend says what both mean, and the last line counts no failure', () => {
    const lines = summary(report, false).trimEnd().split('\n');

    expect(resultLine(WARNED, false)).toBe('! lists.each-record-once  Lists page through the account’s own records, each exactly once [optional]');
    expect(resultLine(PASSED, false)).not.toContain('[optional]');
    // A check that need not run says so when it did not, so that a skip is not read as the verdict's.
    expect(resultLine({ ...PASSED, required: false, outcome: 'skipped', reason: 'needs a sandbox clock' }, false)).toBe('- auth.key-required  Requests without a valid API key are refused [not required]');
    expect(resultLine({ ...PASSED, outcome: 'skipped', reason: 'needs --second-key' }, false)).toBe('- auth.key-required  Requests without a valid API key are refused');
    expect(consoleLegend()).toMatch(/! warning \(an optional check found a flaw\)/);
    expect(consoleLegend()).toMatch(/\[optional\] runs and is shown, but never decides the verdict: a flaw it finds is a warning/);
    expect(lines.at(-1)).toBe('1 passed, 0 failed, 0 skipped');
    expect(lines.at(-2)).toMatch(/^PASS: .*, 1 warning \(optional checks that do not decide the verdict\)$/);
    expect(lines).toContain('Warnings (optional checks; they do not decide the verdict): lists.each-record-once (AUTH-ACCOUNT)');
  });

  it('when written as JSON, then a consumer reads the outcome warned with its failure, and counts.failed leaves it out', () => {
    const json = JSON.parse(toJson(report)) as Report;

    expect(json.results.find((r) => r.id === WARNED.id)).toMatchObject({ outcome: 'warned', optional: true, failure: { clause: 'AUTH-ACCOUNT' } });
    expect(json.counts).toMatchObject({ failed: 0, warned: 1 });
  });

  it('when written as JUnit, then nothing counts as a failure and the case carries a warning property and its detail', () => {
    const xml = toJunit(report);
    const testcase = xml.slice(xml.indexOf('name="lists.each-record-once'), xml.indexOf('</testcase>', xml.indexOf('name="lists.each-record-once')));

    expect(xml).not.toContain('<failure');
    expect(xml).toMatch(/<testsuites [^>]*failures="0"/);
    expect(xml).toMatch(/<testsuite name="conformance\.lists" tests="1" failures="0" errors="0" skipped="0"/);
    expect(testcase).toContain('<property name="warning" value="AUTH-ACCOUNT: GET /v1/avatars listed 1 record of another account"/>');
    expect(testcase).toMatch(/<system-out>warning \(an optional check; it does not decide the verdict\): AUTH-ACCOUNT: GET \/v1\/avatars listed 1 record/);
  });

  it('when written as Markdown, then it has a Warnings section with the flaw and no Failures section', () => {
    const markdown = toMarkdown(report);

    expect(markdown).toContain('Verdict: **PASS**');
    expect(markdown).toContain('1 passed, 0 failed, 0 skipped, 0 not applicable; 1 warning (optional checks that found a flaw: they do not decide the verdict).');
    expect(markdown).not.toContain('## Failures');
    expect(markdown).toContain('## Warnings\n\nAn optional check runs and is shown, but never decides the verdict: a flaw it finds is a warning. What one found:');
    expect(markdown).toContain('### lists.each-record-once (AUTH-ACCOUNT)\n\nGET /v1/avatars listed 1 record of another account');
    expect(markdown).toMatch(/\| AUTH-ACCOUNT \| .* \| ⚠️ warning \|/);
  });

  it('when written as HTML, then the check and its clause are marked warned, with the warning counted and [optional] explained', () => {
    const html = toHtml(report);

    expect(html).toContain('data-verdict="pass"');
    expect(html).toContain('<tr data-check="lists.each-record-once" data-outcome="warned">');
    expect(html).toContain('<tr data-clause="AUTH-ACCOUNT" data-outcome="warned">');
    expect(html).toMatch(/1 warning<\/span> \(optional checks that found a flaw: they do not decide the verdict\)/);
    expect(html).toContain('[optional]: runs and is shown, but never decides the verdict');
  });
});
