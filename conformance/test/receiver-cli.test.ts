// `receiver` on the command line, as users run it: the bound stated first, the reports
// written, the exit codes and last line of a service run, one-line usage errors naming
// the flag, and the secret nowhere in what it prints or writes.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { receiverCommand } from '../src/receiver-checks/command.ts';
import { RECEIVER_SECRET, startClientReceiver, startIndependentReceiver } from './fixtures/receivers.ts';

const CLI = new URL('../src/cli.ts', import.meta.url).pathname;
const LAST_LINE = /^\d+ passed, \d+ failed, \d+ skipped$/;

function cli(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string; last: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, 'receiver', ...args], { env: { ...process.env, NO_COLOR: '1', CONFORMANCE_SIGNING_SECRET: '', CONFORMANCE_RECEIVER_URL: '', ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr, last: stdout.trimEnd().split('\n').at(-1) ?? '' }));
  });
}

describe('conformance CLI: receiver', () => {
  it('when this project\'s receiver is judged, then it states its bound first, passes, exits 0 and writes the three reports without the secret', async () => {
    const receiver = await startClientReceiver();
    const dir = mkdtempSync(join(tmpdir(), 'receiver-reports-'));
    try {
      const result = await cli(['--url', receiver.url, '--report-json', join(dir, 'r.json'), '--report-junit', join(dir, 'r.xml'), '--report-md', join(dir, 'r.md')], { CONFORMANCE_SIGNING_SECRET: RECEIVER_SECRET });
      expect(result.code, result.stdout + result.stderr).toBe(0);
      const lines = result.stdout.split('\n');
      expect(lines[0]).toBe(`Receiver conformance run: ${receiver.url}, 6 checks, sending as this project's API (the default), tolerance 300 s`);
      expect(lines[1]).toBe('bound: 19 deliveries, each answered within 10 s or counted unanswered; the run ends within 202 s');
      expect(result.stdout).toContain('✓ receiver.duplicates-acknowledged');
      expect(result.stdout).toMatch(/PASS: receiver http:\/\/127\.0\.0\.1:\d+\/webhooks, 19 deliveries sent, /);
      expect(result.last).toBe('6 passed, 0 failed, 0 skipped');
      const json = readFileSync(join(dir, 'r.json'), 'utf8');
      expect(JSON.parse(json)).toMatchObject({ subject: 'receiver', verdict: 'pass', exitCode: 0, baseUrl: receiver.url, deliveries: 19 });
      const junit = readFileSync(join(dir, 'r.xml'), 'utf8');
      expect(junit).toContain('<testsuite name="conformance.receiver" tests="6" failures="0"');
      const markdown = readFileSync(join(dir, 'r.md'), 'utf8');
      expect(markdown).toContain(`# Receiver conformance report: ${receiver.url}`);
      expect(markdown).toContain('| WH-DUPLICATES | C, R |');
      for (const text of [result.stdout, result.stderr, json, junit, markdown]) expect(text).not.toContain(RECEIVER_SECRET);
    } finally {
      await receiver.close();
    }
  });

  it('when a receiver breaks a rule, then it exits 1 naming the check and the clause, with the fix', async () => {
    const receiver = await startIndependentReceiver({ flaw: 'duplicate-500' });
    try {
      const result = await cli(['--url', receiver.url, '--signing-secret', RECEIVER_SECRET, '--timeout', '3']);
      expect(result.code).toBe(1);
      expect(result.stdout).toContain('✗ receiver.duplicates-acknowledged');
      expect(result.stdout).toContain('WH-DUPLICATES: the same delivery again was not acknowledged: it got 500');
      expect(result.stdout).toContain('fix: keep the IDs of processed events');
      expect(result.stdout).toContain('Failed: receiver.duplicates-acknowledged (WH-DUPLICATES)');
      expect(result.last).toBe('5 passed, 1 failed, 0 skipped');
      expect(result.stdout).not.toContain(RECEIVER_SECRET);
    } finally {
      await receiver.close();
    }
  });

  // Usage errors come before anything is sent (port 9 is never contacted); the command is
  // called in process here, as cli.ts calls it, to keep these quick.
  it.each([
    [[], '--url is required'],
    [['--url', 'ftp://127.0.0.1/hooks', '--signing-secret', 's'], '--url must be an http:// or https:// URL'],
    [['--url', 'http://127.0.0.1:9/hooks'], '--signing-secret is required'],
    [['--url', 'http://127.0.0.1:9/hooks', '--signing-secret', 's', '--tolerance', 'soon'], '--tolerance must be a number of seconds'],
    [['--url', 'http://127.0.0.1:9/hooks', '--signing-secret', 's', '--timeout', '0'], '--timeout must be a number of seconds'],
    [['--url', 'http://127.0.0.1:9/hooks', '--signing-secret', 's', '--implementation', '/nonexistent/p.yaml'], '/nonexistent/p.yaml is not a valid implementation profile: cannot be read'],
    [['--url', 'http://127.0.0.1:9/hooks', '--signing-secret', 's', '--base-url', 'x'], "Unknown option '--base-url'"],
  ])('when given %j, then it exits 2 with one line naming the flag', async (args, message) => {
    let stdout = '';
    let stderr = '';
    const code = await receiverCommand(args, { out: (text) => void (stdout += text), err: (text) => void (stderr += text), command: 'avatar-conformance', env: {}, color: false });
    expect(code).toBe(2);
    expect(stderr.trim().split('\n')).toHaveLength(1);
    expect(stderr).toContain(`usage: ${message}`);
    expect(stderr).toContain('(see avatar-conformance receiver --help)');
    expect(stdout.trimEnd().split('\n').at(-1)).toMatch(LAST_LINE);
  });

  it('when asked for --help, then it prints the receiver\'s usage under the command name and exits 0', async () => {
    let stdout = '';
    const code = await receiverCommand(['--help'], { out: (text) => void (stdout += text), err: () => undefined, command: 'avatar-conformance', env: {}, color: false });
    expect(code).toBe(0);
    expect(stdout).toMatch(/^Usage: avatar-conformance receiver --url <receiver URL> --signing-secret <secret>/);
    expect(stdout).toContain('--tolerance <s>');
  });

  it('when the receiver takes deliveries and never answers, then each is given up at --timeout and the process exits after its reports', async () => {
    const silent = createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const dir = mkdtempSync(join(tmpdir(), 'receiver-silent-'));
    try {
      const url = `http://127.0.0.1:${(silent.address() as AddressInfo).port}/hooks`;
      const result = await cli(['--url', url, '--signing-secret', RECEIVER_SECRET, '--timeout', '0.2', '--only', 'receiver.each-event-type-accepted', '--report-json', join(dir, 'r.json')]);
      expect(result.code).toBe(1);
      expect(result.stdout).toContain('bound: 4 deliveries, each answered within 0.2 s or counted unanswered; the run ends within 2.8 s');
      expect(result.stdout).toContain('a valid avatar.ready event was not acknowledged: no answer within 0.2 s');
      expect(JSON.parse(readFileSync(join(dir, 'r.json'), 'utf8'))).toMatchObject({ verdict: 'fail', counts: { failed: 1 } });
    } finally {
      silent.closeAllConnections();
      await new Promise((resolve) => silent.close(resolve));
    }
  });

  it('when nothing listens at the URL, then it exits 3 with a one-line diagnosis', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const result = await cli(['--url', `http://127.0.0.1:${port}/hooks`, '--signing-secret', RECEIVER_SECRET]);
    expect(result.code).toBe(3);
    expect(result.stdout).toMatch(/unreachable: cannot reach http:\/\/127\.0\.0\.1:\d+\/hooks: ECONNREFUSED/);
    expect(result.last).toBe('0 passed, 0 failed, 0 skipped');
  });
});
