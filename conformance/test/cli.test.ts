// The command line as users meet it: exit codes, one-line diagnoses without stack
// traces, the reports it writes, and the last line of its output.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startIndependent } from './fixtures/independent.ts';
import { SECRET, startFixture, type Fixture } from './fixtures/reference.ts';

const CLI = new URL('../src/cli.ts', import.meta.url).pathname;
const EXAMPLE_PROFILE = new URL('../examples/independent.profile.yaml', import.meta.url).pathname;
const INDEPENDENT_OPENAPI = new URL('./fixtures/independent.openapi.yaml', import.meta.url).pathname;
const LAST_LINE = /^\d+ passed, \d+ failed, \d+ skipped$/;
/** The values a core run needs besides --api-key, for the runs that end before any check (any value will do). */
const OTHER_VALUES = { CONFORMANCE_SECOND_KEY: 'sk_test_second', CONFORMANCE_EMPTY_KEY: 'sk_test_empty', CONFORMANCE_SIGNING_SECRET: 'whsec_unused' };

function cli(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string; last: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, NO_COLOR: '1', ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr, last: stdout.trimEnd().split('\n').at(-1) ?? '' }));
  });
}

function noStackTrace(text: string) {
  expect(text).not.toMatch(/\n\s+at .+:\d+:\d+/);
}

/** The timings of the fixture, as a --config file (the flags cover the common ones only). */
function configFor(fixture: Fixture): string {
  const dir = mkdtempSync(join(tmpdir(), 'conformance-cli-'));
  const file = join(dir, 'config.json');
  writeFileSync(file, JSON.stringify({ pollInitialDelayMs: 50, pollMaxDelayMs: 200, terminalObserveSeconds: 0.6, expectedLimits: { generation: [fixture.config.limits.generation, fixture.config.limits.day.generation], read: [fixture.config.limits.read, fixture.config.limits.day.read] } }));
  return file;
}

describe('conformance CLI', () => {
  let fixture: Fixture;
  let htmlServer: Server;
  let htmlUrl: string;
  beforeAll(async () => {
    fixture = await startFixture();
    htmlServer = createServer((_req, res) => {
      res.writeHead(404, { 'content-type': 'text/html' });
      res.end('<html><body>Not here</body></html>');
    });
    await new Promise<void>((resolve) => htmlServer.listen(0, '127.0.0.1', resolve));
    htmlUrl = `http://127.0.0.1:${(htmlServer.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await fixture.close();
    await new Promise((resolve) => htmlServer.close(resolve));
  });

  it('when asked for --list, then it prints the clause-to-check matrix and exits 0', async () => {
    const result = await cli(['--list']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('| RL-429 | B | rate-limits.over-limit-429, rate-limits.retry-after-admits, rate-limits.daily-windows |');
    expect(result.stdout).toContain(
      '| WH-RECEIVER-VERIFY | C, R | (client: client/test/verify.test.ts); receiver mode: receiver.each-event-type-accepted, receiver.signature-verified, receiver.timestamp-checked, receiver.raw-body-verified |',
    );
    expect(result.stdout).toContain('| ND-STATES | status moves queued -> processing -> ready \\| failed, or queued -> failed. |');
  });

  it('when asked for --list, then each clause is followed by what its checks assert', async () => {
    const result = await cli(['--list']);
    expect(result.stdout).toContain('## RL-HEADERS (B): Successes and 429s carry RateLimit-Limit, -Remaining and -Reset for the active window.');
    expect(result.stdout).toMatch(/^After each clause ID, who can see the rule hold: B .+; W .+; C .+$/m);
    // The section numbers are those of a source document the user does not have.
    expect(result.stdout).not.toContain('§');
    expect(result.stdout).toMatch(/- `rate-limits.headers-on-answers`: .*Reset is a number of seconds no longer than the window/);
  });

  it('when the implementation profile breaks a rule, then it exits 2 naming the member before any request', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'conformance-profile-'));
    const file = join(dir, 'bad.profile.yaml');
    writeFileSync(file, 'profile: 1\nrecords:\n  status: state\n');
    const result = await cli(['--base-url', 'http://127.0.0.1:9', '--api-key', 'k', '--implementation', file]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`${file} is not a valid implementation profile: records.status: must match pattern`);
    expect(result.last).toMatch(LAST_LINE);
    noStackTrace(result.stderr);
  });

  it('when a workspace key is given without its owner key, or the owner key alone, then it exits 2 naming the one missing before any request', async () => {
    const [workspaceOnly, ownerOnly] = await Promise.all([
      cli(['--base-url', 'http://127.0.0.1:9', '--api-key', 'k', '--workspace-key', 'sk_test_ws'], OTHER_VALUES),
      cli(['--base-url', 'http://127.0.0.1:9', '--api-key', 'k'], { ...OTHER_VALUES, CONFORMANCE_OWNER_KEY: 'sk_test_owner' }),
    ]);
    expect([workspaceOnly.code, ownerOnly.code]).toEqual([2, 2]);
    expect(workspaceOnly.stderr).toBe("usage: --owner-key (or CONFORMANCE_OWNER_KEY) is missing: --workspace-key and --owner-key are given together, a workspace's key and its owner account's (see --help)\n");
    expect(ownerOnly.stderr).toBe("usage: --workspace-key (or CONFORMANCE_WORKSPACE_KEY) is missing: --workspace-key and --owner-key are given together, a workspace's key and its owner account's (see --help)\n");
    expect(workspaceOnly.last).toMatch(LAST_LINE);
  });

  it('when an implementation profile is given with the contract profile, then it exits 2 saying which profiles take one', async () => {
    const result = await cli(['--base-url', 'http://127.0.0.1:9', '--api-key', 'k', '--implementation', EXAMPLE_PROFILE, '--profile', 'contract']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('an implementation profile is for the core and production profiles');
  });

  it('when asked to draft a profile from an OpenAPI document, then it prints YAML and lists what to review', async () => {
    const result = await cli(['draft-profile', INDEPENDENT_OPENAPI]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('header: X-Api-Key');
    expect(result.stdout).toContain('# review:');
    expect(result.stderr).toMatch(/^review: prices: /m);
    expect(result.stderr).toMatch(/^review: failure: /m);
  });

  it('when an implementation that chose otherwise is run with its profile file, then it passes and exits 0', async () => {
    const independent = await startIndependent();
    try {
      const { limits, retryDelaysMs, signingSecret } = independent.config;
      const result = await cli([
        '--base-url', independent.baseUrl,
        '--implementation', EXAMPLE_PROFILE,
        '--api-key', independent.keys.main, '--second-key', independent.keys.second, '--empty-key', independent.keys.empty, '--signing-secret', signingSecret,
        '--expect-generation-limits', String(limits.generation), '--expect-read-limits', String(limits.read), '--expect-windows', String(limits.windowMs / 1000),
        '--job-timeout', '10', '--webhook-first-retry', String(retryDelaysMs[0]! / 1000), '--webhook-retry-timeout', '3',
      ]);
      expect(result.code, result.stdout).toBe(0);
      expect(result.stdout).toContain('implementation profile: Independent avatars (test implementation)');
      // Skipped: the three checks that need a sandbox clock; the credit checks its /v1/me
      // cannot feed are not applicable, counted on the line before.
      expect(result.last).toMatch(/^\d+ passed, 0 failed, 3 skipped$/);
      expect(result.stdout).not.toContain(independent.keys.main);
    } finally {
      await independent.close();
    }
  }, 60_000);

  it('when --api-key is missing, then it exits 2 with a usage line', async () => {
    const result = await cli(['--base-url', fixture.baseUrl]);
    expect(result.code).toBe(2);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toContain('--api-key is required');
    expect(result.last).toMatch(LAST_LINE);
  });

  it('when the base URL is unreachable, then it exits 3 with a one-line diagnosis', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const result = await cli(['--base-url', `http://127.0.0.1:${port}`, '--api-key', 'sk_test_x'], OTHER_VALUES);
    expect(result.code).toBe(3);
    expect(result.stdout).toMatch(/unreachable: cannot reach http:\/\/127\.0\.0\.1:\d+: ECONNREFUSED/);
    expect(result.last).toBe('0 passed, 0 failed, 0 skipped');
    noStackTrace(result.stdout + result.stderr);
  });

  it('when the key is refused, then it exits 4 naming the flag', async () => {
    const result = await cli(['--base-url', fixture.baseUrl, '--api-key', 'sk_test_nobody'], OTHER_VALUES);
    expect(result.code).toBe(4);
    expect(result.stdout).toContain('rejected-key: the service refused --api-key (GET /v1/me answered 401)');
    noStackTrace(result.stdout + result.stderr);
  });

  it('when the server is not this API, then it exits 5 with a hint', async () => {
    const result = await cli(['--base-url', `${htmlUrl}/v1`, '--api-key', 'sk_test_x'], OTHER_VALUES);
    expect(result.code).toBe(5);
    expect(result.stdout).toContain('does not look like the Avatar Service API: GET /v1/me answered 404 text/html');
    expect(result.stdout).toContain('must not end in /v1');
    noStackTrace(result.stdout + result.stderr);
  });

  it('when --empty-key belongs to an account with credits, then it exits 2 saying so', async () => {
    const result = await cli(['--base-url', fixture.baseUrl, '--api-key', fixture.keys.main, '--empty-key', fixture.keys.second, '--second-key', fixture.keys.empty, '--signing-secret', SECRET]);
    expect(result.code).toBe(2);
    expect(result.stdout).toContain('--empty-key');
  });

  it('when a run passes, then it writes JSON, JUnit and Markdown reports and exits 0', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'conformance-reports-'));
    const own = await startFixture();
    try {
      const result = await cli(
        [
          '--base-url', own.baseUrl,
          '--profile', 'contract',
          '--config', configFor(own),
          '--job-timeout', '10',
          '--webhook-first-retry', String(own.config.webhookRetryDelaysMs[0]! / 1000),
          '--webhook-retry-timeout', '3',
          '--webhook-retries', own.config.webhookRetryDelaysMs.map((ms) => ms / 1000).join(','),
          '--report-json', join(dir, 'report.json'),
          '--report-junit', join(dir, 'report.xml'),
          '--report-md', join(dir, 'report.md'),
        ],
        { CONFORMANCE_API_KEY: own.keys.main, CONFORMANCE_SECOND_KEY: own.keys.second, CONFORMANCE_EMPTY_KEY: own.keys.empty, CONFORMANCE_SIGNING_SECRET: SECRET },
      );
      expect(result.code, result.stdout).toBe(0);
      expect(result.last).toMatch(/^\d+ passed, 0 failed, 0 skipped$/);
      const report = JSON.parse(readFileSync(join(dir, 'report.json'), 'utf8')) as { verdict: string; results: unknown[] };
      expect(report.verdict).toBe('pass');
      expect(readFileSync(join(dir, 'report.xml'), 'utf8')).toMatch(/<testsuites name="avatar-api-conformance contract [^"]+" tests="\d+" failures="0"/);
      const markdown = readFileSync(join(dir, 'report.md'), 'utf8');
      expect(markdown).toContain('| RL-PER-KEY | B |');
      expect(markdown).toContain('## Contract decisions');
      // Keys never reach the output or the reports.
      for (const text of [result.stdout, readFileSync(join(dir, 'report.json'), 'utf8')]) expect(text).not.toContain(own.keys.main);
    } finally {
      await own.close();
    }
  }, 60_000);

  it('when a run finds a broken clause, then it exits 1 and names the clause', async () => {
    const broken = await startFixture({ flaws: { omitRetryAfter: true } });
    try {
      const result = await cli(
        ['--base-url', broken.baseUrl, '--api-key', broken.keys.main, '--second-key', broken.keys.second, '--empty-key', broken.keys.empty, '--signing-secret', SECRET, '--config', configFor(broken), '--job-timeout', '10', '--webhook-first-retry', '0.4', '--webhook-retry-timeout', '3', '--only', 'rate-limits'],
      );
      expect(result.code).toBe(1);
      expect(result.stdout).toContain('✗ rate-limits.over-limit-429');
      expect(result.stdout).toContain('RL-429: the 429 has no Retry-After header');
      expect(result.last).toMatch(/^\d+ passed, 1 failed, \d+ skipped$/);
    } finally {
      await broken.close();
    }
  }, 60_000);

  it('when the required checks need values it was not given, then it refuses before any request, one line per value naming its flag and variable, and exits 2', async () => {
    let requests = 0;
    const counting = createServer((_req, res) => {
      requests++;
      res.end();
    });
    await new Promise<void>((resolve) => counting.listen(0, '127.0.0.1', resolve));
    try {
      const result = await cli(['--base-url', `http://127.0.0.1:${(counting.address() as AddressInfo).port}`, '--api-key', 'sk_test_x']);

      expect(result.code).toBe(2);
      const lines = result.stderr.trim().split('\n');
      expect(lines).toHaveLength(3);
      expect(lines[0]).toMatch(/^usage: --second-key \(or CONFORMANCE_SECOND_KEY\) is missing: a key of another account, needed by 1 required check of the core profile \(auth\.other-account-hidden\); --skip second-key leaves it out$/);
      expect(lines[1]).toMatch(/^usage: --empty-key \(or CONFORMANCE_EMPTY_KEY\) is missing: .*needed by \d+ required checks of the core profile/);
      expect(lines[2]).toMatch(/^usage: --signing-secret \(or CONFORMANCE_SIGNING_SECRET\) is missing: .*webhooks\.signature.*--skip receiver leaves them out$/);
      expect(result.stdout.trim()).toBe('0 passed, 0 failed, 0 skipped');
      expect(requests).toBe(0);
    } finally {
      await new Promise((resolve) => counting.close(resolve));
    }
  });

  it('when the checks a run selects need none of the missing values, then it runs, with a legend, in the singular for one check, and a core report without the contract\'s decisions', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'conformance-one-'));
    const result = await cli(['--base-url', fixture.baseUrl, '--api-key', fixture.keys.main, '--only', 'auth.key-required', '--report-md', join(dir, 'report.md')]);
    const markdown = readFileSync(join(dir, 'report.md'), 'utf8');

    expect(result.code, result.stdout + result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^Conformance run: http:\/\/127\.0\.0\.1:\d+, profile core, 1 check, implementation profile: this project's API \(the default\), ends within \d+ s$/m);
    // The bound and the budget say what they are where they are printed.
    expect(result.stdout).toMatch(/^bound: \d+ s, an upper limit and not an estimate: the time a correct implementation .* needs at most, end to end/m);
    // Every mark a result line can start with is explained before the first one.
    for (const [mark, meaning] of [['✓', 'passed'], ['✗', 'failed'], ['-', 'skipped'], ['·', 'not applicable'], ['!', 'warning'], ['[optional]', 'runs and is shown, but never decides the verdict']]) expect(result.stdout).toContain(`${mark} ${meaning}`);
    expect(result.stdout).toMatch(/^PASS: profile core, \d+ requests?, 0 webhooks received, /m);
    expect(result.last).toBe('1 passed, 0 failed, 0 skipped');
    expect(markdown).not.toContain('Contract decisions');
    expect(markdown).not.toContain('§');
    expect(markdown).not.toContain("this project's contract");
    for (const column of ['clause', 'observe', 'rule', 'checks', 'result']) expect(markdown).toContain(`- **${column}**: `);
    expect(markdown).toMatch(/\*\*B\*\*: a client over HTTP.*\*\*W\*\*: .*\*\*C\*\*: /);
    for (const icon of ['✅ passed', '❌ failed', '⚠️ warning', '⏭️ skipped', '· n/a', '❗ no check', '🧩 client']) expect(markdown).toContain(`${icon}: `);
    expect(markdown).toContain('1 passed, 0 failed, 0 skipped, ');
  }, 60_000);

  it('when required checks did not run, then the summary names each on a line of its own', async () => {
    const result = await cli(['--base-url', fixture.baseUrl, '--api-key', fixture.keys.main, '--signing-secret', SECRET, '--no-fail-marker', '--only', 'avatars.failed-has-error,videos.failed-has-error']);

    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/Required but not run \(the verdict fails\): 2 checks\n {2}avatars\.failed-has-error: needs a way to make a job fail .*\n {2}videos\.failed-has-error: needs a way to make a job fail .*\n/);
    expect(result.last).toBe('0 passed, 0 failed, 2 skipped');
  }, 60_000);

  it('when run with --no-receiver, then it says the flag is deprecated and runs as --skip receiver: the checks that need webhooks are left out and no secret is asked for', async () => {
    const result = await cli(['--base-url', fixture.baseUrl, '--api-key', fixture.keys.main, '--no-receiver', '--only', 'webhooks.signature,auth.key-required']);

    expect(result.code, result.stdout + result.stderr).toBe(0);
    expect(result.stderr).toContain('note: --no-receiver is deprecated: it means --skip receiver');
    expect(result.stdout).not.toContain('webhooks.signature');
    expect(result.last).toBe('1 passed, 0 failed, 0 skipped');
  }, 60_000);
});
