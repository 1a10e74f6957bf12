// `proxy` on the command line, as users run it: its URL on the first line, clients
// pointed at it, the verdict after SIGTERM or --duration, the reports written, the exit
// codes and last line of a service run, one-line usage errors naming the flag, and no key
// or secret anywhere in what it prints or writes.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { proxyCommand } from '../src/proxy/command.ts';
import { independentFlow, startRecordingReceiver } from './fixtures/clients.ts';
import { KEYS, SECRET, startFixture } from './fixtures/reference.ts';

const CLI = new URL('../src/cli.ts', import.meta.url).pathname;
const LAST_LINE = /^\d+ passed, \d+ failed, \d+ skipped$/;

interface Running {
  child: ChildProcessWithoutNullStreams;
  /** The URL on its first line. */
  url: Promise<string>;
  done: Promise<{ code: number; stdout: string; stderr: string; last: string; exitedAt: number }>;
}

function proxy(args: string[]): Running {
  const child = spawn(process.execPath, [CLI, 'proxy', ...args], { env: { ...process.env, NO_COLOR: '1', CONFORMANCE_SIGNING_SECRET: '' } });
  let stdout = '';
  let stderr = '';
  let firstLine: (line: string) => void = () => undefined;
  const url = new Promise<string>((resolve, reject) => {
    firstLine = (line) => {
      const found = /http:\/\/127\.0\.0\.1:\d+/.exec(line)?.[0];
      if (found) resolve(found);
      else reject(new Error(`no URL on the first line: ${line}`));
    };
  });
  child.stdout.on('data', (chunk: Buffer) => {
    const before = stdout;
    stdout += chunk.toString();
    if (!before.includes('\n') && stdout.includes('\n')) firstLine(stdout.split('\n')[0]!);
  });
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const done = new Promise<Awaited<Running['done']>>((resolve) =>
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr, last: stdout.trimEnd().split('\n').at(-1) ?? '', exitedAt: Date.now() })),
  );
  return { child, url, done };
}

describe('conformance CLI: proxy', () => {
  it('when a correct client and its receiver work through it until SIGTERM, then it prints its URL first, passes, exits 0 and writes the three reports without a key or the secret', async () => {
    const fixture = await startFixture();
    const receiver = await startRecordingReceiver();
    const dir = mkdtempSync(join(tmpdir(), 'proxy-reports-'));
    const running = proxy(['--upstream', fixture.baseUrl, '--listen', '0', '--signing-secret', SECRET, '--inject-429', '0.2', '--report-json', join(dir, 'r.json'), '--report-junit', join(dir, 'r.xml'), '--report-md', join(dir, 'r.md')]);
    try {
      const url = await running.url;
      await independentFlow(url, fixture.keys.main, { webhookUrl: receiver.url, download: false });
      await expect.poll(() => receiver.received.length, { timeout: 5000 }).toBeGreaterThanOrEqual(2);
      running.child.kill('SIGTERM');
      const result = await running.done;
      expect(result.code, result.stdout + result.stderr).toBe(0);
      const lines = result.stdout.split('\n');
      expect(lines[0]).toBe(`Conformance proxy: ${url} -> ${fixture.baseUrl}`);
      expect(lines[1]).toContain('20 % of each key\'s rate-limited requests answered 429 by the proxy (--inject-429)');
      expect(result.stdout).toMatch(/✓ client\.waits-retry-after/);
      expect(result.stdout).toMatch(/✓ service\.webhook-signature/);
      expect(result.stdout).toMatch(/PASS: traffic to http:\/\/127\.0\.0\.1:\d+, \d+ requests and \d+ webhooks seen/);
      expect(result.last).toMatch(LAST_LINE);
      const json = readFileSync(join(dir, 'r.json'), 'utf8');
      expect(JSON.parse(json)).toMatchObject({ subject: 'proxy', verdict: 'pass', exitCode: 0, baseUrl: fixture.baseUrl });
      const junit = readFileSync(join(dir, 'r.xml'), 'utf8');
      expect(junit).toContain('<testsuite name="conformance.client" tests="3" failures="0"');
      const markdown = readFileSync(join(dir, 'r.md'), 'utf8');
      expect(markdown).toContain(`# Proxy conformance report: ${fixture.baseUrl}`);
      expect(markdown).toContain('| RL-CLIENT-WAIT |');
      for (const text of [result.stdout, result.stderr, json, junit, markdown]) {
        expect(text).not.toContain(SECRET);
        for (const key of Object.values(KEYS)) expect(text).not.toContain(key);
      }
    } finally {
      running.child.kill('SIGKILL');
      await receiver.close();
      await fixture.close();
    }
  }, 30_000);

  it('when a client polls every 200 ms and --duration ends the run, then it exits 1 naming the check and the clause, right after its verdict', async () => {
    const fixture = await startFixture();
    const running = proxy(['--upstream', fixture.baseUrl, '--listen', '127.0.0.1:0', '--duration', '3']);
    try {
      const url = await running.url;
      const started = Date.now();
      await independentFlow(url, fixture.keys.main, { flaws: { pollEveryMs: 200 }, download: false });
      expect(Date.now() - started).toBeLessThan(3000);
      const result = await running.done;
      expect(result.code, result.stdout + result.stderr).toBe(1);
      expect(result.stdout).toContain('✗ client.polls-back-off');
      expect(result.stdout).toMatch(/RL-CLIENT-BACKOFF: key 1 \(sk_test_…\) avatar \S+ was polled \d+ ms after the previous poll/);
      expect(result.stdout).toContain('Failed: client.polls-back-off (RL-CLIENT-BACKOFF)');
      // Nothing was injected and the service never limited it: the wait cannot be judged, and says why.
      expect(result.stdout).toMatch(/· client\.waits-retry-after[^\n]*\n\s+not applicable: no request got a 429/);
      expect(result.last).toMatch(LAST_LINE);
      // --duration 3 from its first line: judged and gone well within 3 s more.
      expect(result.exitedAt - started).toBeLessThan(6000);
    } finally {
      running.child.kill('SIGKILL');
      await fixture.close();
    }
  }, 30_000);

  // Usage errors come before anything listens; the command is called in process here, as
  // cli.ts calls it, to keep these quick.
  it.each([
    [[], '--upstream is required'],
    [['--upstream', 'ftp://127.0.0.1/'], '--upstream must be an http:// or https:// URL'],
    [['--upstream', 'http://127.0.0.1:9'], '--listen is required'],
    [['--upstream', 'http://127.0.0.1:9', '--listen', 'eighty'], '--listen must be a port from 0 to 65535'],
    [['--upstream', 'http://127.0.0.1:9', '--listen', '70000'], '--listen must be a port from 0 to 65535'],
    [['--upstream', 'http://127.0.0.1:9', '--listen', '0', '--inject-429', '1'], '--inject-429 must be a share from 0 to below 1'],
    [['--upstream', 'http://127.0.0.1:9', '--listen', '0', '--duration', 'soon'], '--duration must be a number of seconds above 0'],
    [['--upstream', 'http://127.0.0.1:9', '--listen', '0', '--duration', '-2'], "Option '--duration' argument is ambiguous"],
    [['--upstream', 'http://127.0.0.1:9', '--listen', '0', '--public-url', 'not a url'], '--public-url is not a URL'],
    [['--upstream', 'http://127.0.0.1:9', '--listen', '0', '--implementation', '/nonexistent/p.yaml'], '/nonexistent/p.yaml is not a valid implementation profile: cannot be read'],
    [['--upstream', 'http://127.0.0.1:9', '--listen', '0', '--base-url', 'x'], "Unknown option '--base-url'"],
    [['--upstream', 'http://127.0.0.1:9', '--listen', '0', '--service-mode', 'staging'], '--service-mode must be sandbox or production, got "staging"'],
  ])('when given %j, then it exits 2 with one line naming the flag', async (args, message) => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await proxyCommand(args, { out: (t) => void out.push(t), err: (t) => void err.push(t), command: 'avatar-conformance', env: {}, color: false, stopped: new Promise(() => undefined) });
    expect(code).toBe(2);
    expect(err.join('').trimEnd().split('\n')).toHaveLength(1);
    expect(err.join('')).toContain(message);
    expect(out.join('').trimEnd()).toMatch(LAST_LINE);
  });

  it('when asked for --help, then it lists every flag and exits 0', async () => {
    const out: string[] = [];
    const code = await proxyCommand(['--help'], { out: (t) => void out.push(t), err: () => undefined, command: 'avatar-conformance', env: {}, color: false, stopped: new Promise(() => undefined) });
    expect(code).toBe(0);
    for (const flag of ['--upstream', '--listen', '--public-url', '--service-mode', '--signing-secret', '--implementation', '--duration', '--inject-429', '--report-json', '--report-junit', '--report-md']) expect(out.join('')).toContain(flag);
    // The secret is recommended in the environment, where ps does not show it.
    expect(out.join('')).toMatch(/Prefer the environment,\s+CONFORMANCE_SIGNING_SECRET=<secret>: a flag shows in the process\s+list \(ps\)/);
  });

  it('when the signing secret is given as a flag, then it warns on stderr that ps shows it, without printing it; from the environment, nothing', async () => {
    const secret = 'whsec_flagflagflagflagflagflagflag';
    const run = async (args: string[], env: Record<string, string>) => {
      const err: string[] = [];
      const out: string[] = [];
      const code = await proxyCommand(['--upstream', 'http://127.0.0.1:9', '--listen', '0', '--duration', '0.01', ...args], { out: (t) => void out.push(t), err: (t) => void err.push(t), command: 'avatar-conformance', env, color: false, stopped: new Promise(() => undefined) });
      return { code, err: err.join(''), out: out.join('') };
    };
    const flagged = await run(['--signing-secret', secret], {});
    expect(flagged.err).toContain('warning: --signing-secret shows in the process list (ps) to every user of this machine; set CONFORMANCE_SIGNING_SECRET in the environment instead');
    const fromEnv = await run([], { CONFORMANCE_SIGNING_SECRET: secret });
    expect(fromEnv.err).not.toContain('warning');
    for (const text of [flagged.err, flagged.out, fromEnv.err, fromEnv.out]) expect(text).not.toContain(secret);
    // Without --public-url the service must call the proxy's own http:// address: a sandbox service.
    expect(fromEnv.out).toContain('when the sandbox rule allows the client\'s webhook_url');
  });
});
