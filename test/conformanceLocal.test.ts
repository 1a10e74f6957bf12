// `npm run conformance:local` as a user meets it: one command that makes its own server,
// store and accounts, runs the runner against them and leaves nothing behind; flags it
// supplies itself are refused, and a server that cannot start is shown with its output.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '..');
const SCRIPT = resolve(ROOT, 'scripts', 'conformance-local.ts');
const INTRO = /^conformance:local: this checkout's server on (http:\/\/127\.0\.0\.1:\d+), on a new store in (\S+) with the accounts a run needs/m;
/** A key or a signing secret as the server makes them: secrets in standard base64 (+ and /), older ones URL-safe (- and _). */
const SECRET_SHAPE = /sk_(test|live)_\w{8,}|whsec_[\w+/-]{8,}/;

function conformanceLocal(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [SCRIPT, ...args], { cwd: ROOT, env: { ...process.env, NO_COLOR: '1', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((done) => child.once('close', (code) => done({ code, stdout, stderr })));
}

describe('npm run conformance:local', () => {
  it('runs the checks that need the second key, the key without credits, the signing secret and the workspace and owner keys, passes, and leaves no server or store behind', async () => {
    // A fast engine: the run waits on the run's jobs and their webhooks.
    const result = await conformanceLocal(['--only', 'auth.other-account-hidden,credits.insufficient-credits-402,webhooks.signature,credits.workspace-charged'], { ENGINE_AVATAR_MS: '100', ENGINE_VIDEO_MS: '100', DATA_DIR: '/nonexistent/ignored', PORT: '1' });
    const [, url, dataDir] = INTRO.exec(result.stdout) ?? [];
    const stillServing = url ? await fetch(`${url}/healthz`).then(() => true, () => false) : undefined;

    expect(result.code, result.stdout + result.stderr).toBe(0);
    expect(url, result.stdout).toBeDefined();
    expect(result.stdout.trimEnd().split('\n').at(-1)).toBe('4 passed, 0 failed, 0 skipped');
    expect(stillServing).toBe(false);
    expect(existsSync(dataDir!)).toBe(false);
    expect(result.stdout + result.stderr).not.toMatch(SECRET_SHAPE);
  }, 120_000);

  it('refuses a value it supplies itself in one line, exit 2, before it starts anything', async () => {
    const result = await conformanceLocal(['--profile', 'contract', '--api-key=sk_test_mine']);

    expect(result.code).toBe(2);
    expect(result.stderr).toBe("conformance:local: --api-key is this script's own: it runs against a server it starts. For another server: npm run conformance -- --base-url <url> ... (npm run conformance -- --help)\n");
    expect(result.stdout).toBe('0 passed, 0 failed, 0 skipped\n');
  });

  it('when its server cannot start, shows what the server wrote and exits 3', async () => {
    const result = await conformanceLocal([], { READ_CACHE_MB: '100000' });

    expect(result.code).toBe(3);
    expect(result.stderr).toMatch(/^conformance:local: the server exited \(code 2\) before it listened; it wrote:\nInvalid configuration: READ_CACHE_MB/);
    expect(result.stdout).not.toMatch(INTRO);
  });
});
