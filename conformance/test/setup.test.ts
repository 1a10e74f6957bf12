// Setup warnings: what the run was badly set up with, said at the top of every report and
// on the console as soon as it is known; a refused main key ends the run at once.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONTRACT_PROFILE } from '../src/implementation/profile.ts';
import type { ProgressEvent } from '../src/options.ts';
import type { Har } from '../src/report/har.ts';
import { toJunit } from '../src/report/junit.ts';
import { toMarkdown } from '../src/report/markdown.ts';
import { summary } from '../src/report/console.ts';
import { type Fixture, startFixture } from './fixtures/reference.ts';
import { run } from './helpers.ts';

const CLI = new URL('../src/cli.ts', import.meta.url).pathname;
/** What the issue asks of a refused main key: the run stops within this long, naming the 401. */
const REFUSED_KEY_STOP_MS = 10_000;

describe('setup warnings', () => {
  let fixture: Fixture;
  let right: Fixture;
  beforeAll(async () => {
    // No sandbox clock (its routes unknown), and credits enough for the run's jobs (80) but
    // fewer than the selection below states it may spend (120).
    fixture = await startFixture({ config: { clock: false, mainQuota: 100 } });
    right = await startFixture();
  });
  afterAll(() => Promise.all([fixture.close(), right.close()]));

  it('when the main key is refused, then the command stops within 10 s naming the 401, and its HAR file holds the refusal', async () => {
    const har = join(mkdtempSync(join(tmpdir(), 'setup-')), 'refused.har');
    const started = Date.now();
    const child = spawn(process.execPath, [CLI, '--base-url', fixture.baseUrl, '--api-key', 'sk_test_refused0000000000000000', '--second-key', fixture.keys.second, '--empty-key', fixture.keys.empty, '--skip', 'receiver', '--no-color', '--report-har', har], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(Date.now() - started).toBeLessThan(REFUSED_KEY_STOP_MS);
    expect(code).toBe(4);
    expect(out).toMatch(/rejected-key: the service refused --api-key \(GET \/v1\/me answered 401\)/);
    expect(out).not.toContain('sk_test_refused0000000000000000');
    const written = readFileSync(har, 'utf8');
    expect(written).not.toContain('sk_test_refused0000000000000000');
    expect((JSON.parse(written) as Har).log.entries.map((entry) => [entry.request.method, new URL(entry.request.url).pathname, entry.response.status, entry._check])).toEqual([['GET', '/v1/me', 401, 'run']]);
  }, 20_000);

  it('when the profile names a clock the service refuses, members /v1/me lacks and the balance is below the budget, then each is said before the first check and first in the reports', async () => {
    const events: ProgressEvent[] = [];
    const implementation = { ...CONTRACT_PROFILE, account: { ...CONTRACT_PROFILE.account, mode: '/key_mode' } };
    const report = await run(fixture, 'core', { implementation, only: ['versioning', 'avatars.get-returns-record'], onProgress: (event) => events.push(event) });
    const warnings = report.setup ?? [];
    expect(warnings.find((w) => w.includes('sandbox clock'))).toMatch(/names a sandbox clock, but the service refused it \(.+\)/);
    expect(warnings.find((w) => w.includes('GET /v1/me'))).toContain('account.mode (/key_mode)');
    expect(warnings.find((w) => w.includes('credits available'))).toMatch(/has 100 credits available and the selected checks' creates that a correct service charges come to 120 \(the budget, every create counted as charged, is 120\)/);
    // Said as it became known: before any check started.
    const firstCheck = events.findIndex((event) => event.type === 'check-start');
    const said = events.flatMap((event, i) => (event.type === 'setup-warning' ? [i] : []));
    expect(said).toHaveLength(warnings.length);
    expect(Math.max(...said)).toBeLessThan(firstCheck);
    // First in the Markdown report, in the JUnit file, and on the console's closing lines.
    const markdown = toMarkdown(report);
    expect(markdown.indexOf('## Setup warnings')).toBeGreaterThan(0);
    expect(markdown.indexOf('## Setup warnings')).toBeLessThan(markdown.indexOf('## Clauses'));
    expect(toJunit(report)).toContain('<testsuite name="conformance.setup"');
    expect(summary(report, false)).toContain('setup warning: ');
  }, 30_000);

  it('when the service cannot reach the receiver, then the run says so', async () => {
    const events: ProgressEvent[] = [];
    const report = await run(right, 'core', { only: ['webhooks.event-type-matches-state'], receiver: { host: '127.0.0.1', port: 0, publicUrl: 'http://127.0.0.1:9' }, onProgress: (event) => events.push(event) });
    expect(report.setup).toEqual([expect.stringMatching(/^the run's jobs that named the receiver ended and no webhook reached it at http:\/\/127\.0\.0\.1:9/)]);
    expect(events.filter((event) => event.type === 'setup-warning')).toHaveLength(1);
  }, 30_000);

  it('when the service refuses the photo URL, then the run says so', async () => {
    const report = await run(right, 'core', { only: ['avatars.get-returns-record'], photoUrl: 'ftp://images.example.com/portrait.jpg' });
    expect(report.setup).toEqual([expect.stringMatching(/^the service refused the photo avatar's photo URL ftp:\/\/images\.example\.com\/portrait\.jpg \(POST \/v1\/avatars answered 4\d\d\)/)]);
  }, 30_000);

  it('when the setup is right, then there is no setup warning', async () => {
    const report = await run(right, 'core', { only: ['versioning'] });
    expect(report.setup).toBeUndefined();
  }, 30_000);
});

