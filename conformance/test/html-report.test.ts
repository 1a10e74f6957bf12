// The HTML report a core run of the command writes (--report-html) against the reference
// fixture, opened from disk in Chromium with the network cut: the verdict, the clause matrix and the three pictures
// are on the page, the failure's exchanges are masked, and a screenshot is kept in
// .reports/ for a reader of the CI artifacts.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeReports } from '../src/report/files.ts';
import { toHtml } from '../src/report/html.ts';
import type { Report } from '../src/report/model.ts';
import { SECRET, startFixture, type Fixture } from './fixtures/reference.ts';
import { optionsFor } from './helpers.ts';

const CLI = new URL('../src/cli.ts', import.meta.url).pathname;

const ARTIFACTS = new URL('../../.reports/', import.meta.url).pathname;
/** Checks whose run makes every shared job, delivers webhooks with retries and reads rate limits: a short run with all three pictures. */
/** The colours of what a check provoked on purpose, and of a flaw (report/html.ts). */
const INTENDED = '#78909c';
const RED = '#c62828';
const SHORT_RUN = ['credits.account-charged', 'webhooks.retried-after-failure', 'rate-limits.headers-on-answers'];

describe('the HTML report', () => {
  let fixture: Fixture;
  let report: Report;
  let browser: Browser;
  let file: string;
  beforeAll(async () => {
    fixture = await startFixture();
    mkdirSync(ARTIFACTS, { recursive: true });
    file = join(ARTIFACTS, 'conformance-report.html');
    const json = join(ARTIFACTS, 'conformance-report.json');
    // The keys and the fixture's timings as a --config file (the flags cover the common
    // ones only), kept out of the artifacts: it holds keys.
    const config = join(mkdtempSync(join(tmpdir(), 'conformance-html-')), 'config.json');
    writeFileSync(config, JSON.stringify(optionsFor(fixture, 'core', { only: SHORT_RUN })));
    const code = await new Promise<number | null>((resolve) => {
      const child = spawn(process.execPath, [CLI, '--config', config, '--report-html', file, '--report-json', json], { env: { ...process.env, NO_COLOR: '1' }, stdio: 'ignore' });
      child.on('close', resolve);
    });
    expect(code).toBe(0);
    report = JSON.parse(readFileSync(json, 'utf8')) as Report;
    browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await fixture?.close();
  });

  it('when a core run of the command wrote it, then it opens offline in Chromium with the verdict, the clause matrix and the three pictures', async () => {
    const context = await browser.newContext({ offline: true });
    const page = await context.newPage();
    const requested: string[] = [];
    page.on('request', (request) => void (request.url().startsWith('file:') || requested.push(request.url())));
    await page.goto(`file://${file}`);
    expect(await page.locator('[data-verdict]').getAttribute('data-verdict')).toBe(report.verdict);
    expect(await page.textContent('body')).toContain(report.implementation);
    // Every clause of the source is a row, those no check could see marked so.
    expect(await page.locator('#clause-matrix tbody tr').count()).toBe(report.clauses.length);
    expect(await page.locator('#clause-matrix td.cell[data-outcome="passed"]').count()).toBeGreaterThan(0);
    const uncovered = report.clauses.filter((row) => row.outcome === 'uncovered').map((row) => row.id);
    for (const id of uncovered) expect(await page.locator(`#clause-matrix tr[data-clause="${id}"]`).textContent()).toContain('no check could see it');
    // The pictures: attempts against the schedule, Remaining against windows, jobs by kind.
    expect(await page.locator('svg[data-chart="webhooks"] circle.attempt').count()).toBeGreaterThan(1);
    expect(await page.locator('svg[data-chart="webhooks"] rect.due').count()).toBeGreaterThan(0);
    expect(await page.locator('svg[data-chart="rate-limits"] path.remaining').count()).toBeGreaterThan(0);
    expect(await page.locator('svg[data-chart="rate-limits"] line.window-end').count()).toBeGreaterThan(0);
    expect(await page.locator('svg[data-chart="jobs"] rect.job[data-kind="avatar"]').count()).toBeGreaterThan(0);
    expect(await page.locator('svg[data-chart="jobs"] rect.job[data-kind="avatar_video"]').count()).toBeGreaterThan(0);
    // Each check's line says its outcome and its time.
    for (const result of report.results) expect(await page.locator(`tr[data-check="${result.id}"]`).getAttribute('data-outcome')).toBe(result.outcome);
    // The run's own provocations are drawn as intended, not as flaws: the first attempt the
    // receiver refused to see the retry, and the job failed with the failure marker.
    const refused = page.locator('svg[data-chart="webhooks"] circle.attempt[data-answered="500"]');
    expect(await refused.count()).toBeGreaterThan(0);
    for (const fill of await refused.evaluateAll((circles) => circles.map((c) => c.getAttribute('fill')))) expect(fill).toBe(INTENDED);
    const failedJobs = report.observations!.jobs.filter((job) => job.expected === 'failed');
    expect(failedJobs.length).toBeGreaterThan(0);
    for (const job of failedJobs) expect(await page.locator(`svg[data-chart="jobs"] rect.job:has(title:text-matches("^${job.label}:"))`).getAttribute('fill')).toBe(INTENDED);
    expect(await page.locator(`svg [fill="${RED}"]`).count()).toBe(0);
    // A check's time is its own, with no "of N s" beside it; the bound is said once, with what it is.
    expect(await page.locator('#check-results').textContent()).not.toMatch(/ s of \d/);
    expect(await page.locator('#bound').textContent()).toContain('not an estimate');
    expect(requested).toEqual([]);
    await page.screenshot({ path: join(ARTIFACTS, 'conformance-report.png'), fullPage: true });
    await context.close();
  });

  it('when a check failed, then its exchanges are shown with the Authorization header and any secret masked', () => {
    const failed: Report = {
      ...report,
      verdict: 'fail',
      results: [
        {
          ...report.results[0]!,
          outcome: 'failed',
          failure: {
            clause: 'RL-HEADERS',
            message: `signed with ${SECRET}`,
            exchanges: [`> GET /v1/me  [key: main]\n> authorization: Bearer ${fixture.keys.main}\n< 200\n< {"secret":"${SECRET}"}`],
          },
        },
      ],
    };
    const html = toHtml(failed);
    expect(html).toContain('&gt; GET /v1/me');
    expect(html).toContain('authorization: Bearer …(masked)');
    expect(html).not.toContain(fixture.keys.main);
    expect(html).not.toContain(SECRET);
  });

  it('when the run spent credits, then the report states its budget and what the balances say it spent', () => {
    expect(report.budget?.planned.credits).toBeGreaterThan(0);
    expect(report.budget?.spent?.credits).toBeGreaterThan(0);
    expect(report.budget!.spent!.credits).toBeLessThanOrEqual(report.budget!.planned.credits!);
    expect(toHtml(report)).toContain(`Spent: <b>${report.budget!.spent!.credits}</b> credits`);
  });

  it('when a receiver or proxy run asks for it, then the same report files write it, saying it has no pictures of a run of its own', () => {
    const { observations: _observations, budget: _budget, ...rest } = report;
    const receiverRun: Report = { ...rest, subject: 'receiver' };
    const out = join(mkdtempSync(join(tmpdir(), 'conformance-html-')), 'receiver.html');
    const errors: string[] = [];
    writeReports(receiverRun, { 'report-html': out }, (text) => void errors.push(text));
    expect(errors).toEqual([]);
    const html = readFileSync(out, 'utf8');
    expect(html).toContain('<h1>Receiver conformance report: ');
    expect(html).toContain('id="clause-matrix"');
    expect(html).toContain('This report has no observations over time');
  });
});
