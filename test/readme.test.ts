// The README as a new user reads it: a front page of at most 300 lines whose links lead
// somewhere (its headings, the guides of docs/ and their headings, the repository's files),
// as do those of the conformance runner's README and of the guides read on GitHub; and its
// quickstart, pasted whole into bash, ends with a downloaded video.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join, relative, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '..');
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens. */
function anchorOf(heading: string): string {
  return heading.trim().toLowerCase().replace(/[^\p{L}\p{N} _-]/gu, '').replace(/ /g, '-');
}

function quickstartBlock(): string {
  const section = README.split(/^## /m).find((part) => part.startsWith('Quickstart\n'));
  const block = section && /```sh\n([\s\S]*?)```/.exec(section)?.[1];
  if (!block) throw new Error('README.md has no "## Quickstart" section with a ```sh block');
  return block;
}

/** The anchors of a Markdown file's headings, as GitHub (and the docs site) make them. */
function anchorsOf(markdown: string): Set<string> {
  const outsideCode = markdown.replace(/^```[\s\S]*?^```$/gm, '');
  return new Set([...outsideCode.matchAll(/^#{1,6} (.+)$/gm)].map((m) => anchorOf(m[1]!.replace(/`/g, ''))));
}

/**
 * Every link of a Markdown file that stays in the repository and leads nowhere: a file
 * that does not exist, or a heading its file does not have. Links to the web, and the
 * site's own paths (/reference/…, built by npm run docs), are not the repository's.
 */
function brokenLinks(file: string): string[] {
  const text = readFileSync(join(ROOT, file), 'utf8').replace(/^```[\s\S]*?^```$/gm, '');
  const broken: string[] = [];
  for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
    if (/^(?:https?:|mailto:|\/)/.test(target!)) continue;
    const [path, anchor] = target!.split('#') as [string, string | undefined];
    const linked = path ? join(ROOT, dirname(file), path) : join(ROOT, file);
    if (!existsSync(linked)) broken.push(`${file}: ${target} (no ${relative(ROOT, linked)})`);
    else if (anchor && linked.endsWith('.md') && !anchorsOf(readFileSync(linked, 'utf8')).has(anchor)) broken.push(`${file}: ${target} (no heading #${anchor} in ${relative(ROOT, linked)})`);
  }
  return broken;
}

describe('README.md', () => {
  it('is a front page: at most 300 lines, and the guides take the rest', () => {
    expect(README.split('\n').length).toBeLessThanOrEqual(300);
    for (const guide of ['getting-started', 'webhooks', 'rate-limits-and-credits', 'sandbox-clock', 'running-the-server', 'conformance', 'receivers-and-clients', 'mocking', 'benchmarks']) {
      expect(README, guide).toContain(`](docs/${guide}.md)`);
    }
  });

  it("links only to headings, files and guides that exist, as do the runner's README and the guides", () => {
    const inPage = [...README.matchAll(/\]\(#([^)]+)\)/g)].map((m) => m[1]!);
    expect(inPage.length).toBeGreaterThan(5);
    expect(inPage.filter((link) => !anchorsOf(README).has(link))).toEqual([]);

    const files = ['README.md', 'conformance/README.md', ...readdirSync(join(ROOT, 'docs')).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`)];
    expect(files.flatMap(brokenLinks)).toEqual([]);
  });

  describe('the quickstart', () => {
    // Inside the repository, so `npm start` finds the project; in a folder of its own,
    // so the files it writes (server.log, video.mp4) are nobody else's.
    mkdirSync(join(ROOT, '.reports'), { recursive: true });
    const cwd = mkdtempSync(join(ROOT, '.reports', 'quickstart-'));
    let group: number | undefined;
    afterAll(() => {
      // A block that hung leaves bash, npm and the server: its whole process group goes.
      if (group !== undefined) {
        try {
          process.kill(-group, 'SIGKILL');
        } catch {
          // Already gone: the block ended by itself.
        }
      }
      rmSync(cwd, { recursive: true, force: true });
    });

    it('pasted whole, downloads a playable video and stops its server', async () => {
      // PORT=0: the block reads its address from the server's first line, so a test
      // needs no fixed port; a user gets the default 3000.
      // TMPDIR: the block's `mktemp -d` store is made inside the test's folder, removed with it.
      const child = spawn('bash', ['-c', quickstartBlock()], { cwd, detached: true, env: { ...process.env, PORT: '0', TMPDIR: cwd }, stdio: ['ignore', 'pipe', 'pipe'] });
      group = child.pid;
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => (output += chunk));
      child.stderr.on('data', (chunk: Buffer) => (output += chunk));
      const code = await new Promise<number | null>((done) => child.once('exit', done));
      const log = existsSync(join(cwd, 'server.log')) ? readFileSync(join(cwd, 'server.log'), 'utf8') : '(no server.log)';

      expect(code, `${output}\n--- server.log ---\n${log}`).toBe(0);
      expect(output).toMatch(/video\.mp4/);
      const probe = spawnSync('ffprobe', ['-v', 'error', '-show_entries', 'stream=codec_name', '-of', 'csv=p=0', join(cwd, 'video.mp4')], { encoding: 'utf8' });
      expect(probe.stdout.trim().split('\n').sort()).toEqual(['aac', 'h264']);
      // `kill $!` stopped the server, which then finishes its shutdown and writes its last line.
      await expect.poll(() => readFileSync(join(cwd, 'server.log'), 'utf8'), { timeout: 15_000 }).toMatch(/shutting down/);
    }, 120_000);
  });
});

describe('docs/getting-started.md', () => {
  const guide = readFileSync(join(ROOT, 'docs', 'getting-started.md'), 'utf8');
  const section = guide.split(/^## /m).find((part) => part.startsWith('A create with a webhook'));
  const receiver = section && /```ts\n([\s\S]*?)```/.exec(section)?.[1];
  const commands = section && /```sh\n([\s\S]*?)```/.exec(section)?.[1];

  mkdirSync(join(ROOT, '.reports'), { recursive: true });
  const cwd = mkdtempSync(join(ROOT, '.reports', 'webhook-guide-'));
  const groups: number[] = [];
  afterAll(() => {
    for (const group of groups) {
      try {
        process.kill(-group, 'SIGKILL');
      } catch {
        // Already gone.
      }
    }
    rmSync(cwd, { recursive: true, force: true });
  });

  it("a create with webhook_url reaches the guide's receiver, run as written but for its ports and the clone's paths", async () => {
    expect(receiver, 'a ```ts receiver in "A create with a webhook"').toBeDefined();
    expect(commands, 'a ```sh block in "A create with a webhook"').toBeDefined();
    const server = spawn(process.execPath, [join(ROOT, 'server', 'src', 'main.ts')], { cwd: ROOT, detached: true, env: { ...process.env, PORT: '0', DATA_DIR: join(cwd, 'data'), LOG_LEVEL: 'warn' }, stdio: ['ignore', 'pipe', 'pipe'] });
    groups.push(server.pid!);
    let log = '';
    server.stdout.on('data', (chunk: Buffer) => (log += chunk));
    server.stderr.on('data', (chunk: Buffer) => (log += chunk));
    // The whole line: the secret is read from it.
    await expect.poll(() => log, { timeout: 20_000 }).toMatch(/signing_secret: *\S+\n/);
    writeFileSync(join(cwd, 'server.log'), log);
    const origin = /listening on (\S+)/.exec(log)![1]!;
    const key = /api_key: *(\S+)/.exec(log)![1]!;
    // A free port for the receiver: the guide's 4000 may be taken on a shared machine.
    const port = await new Promise<number>((done) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as { port: number };
        probe.close(() => done(port));
      });
    });
    writeFileSync(join(cwd, 'receiver.ts'), receiver!.replace("'./client/src/receiver.ts'", JSON.stringify(join(ROOT, 'client', 'src', 'receiver.ts'))).replace('app.listen(4000,', `app.listen(${port},`));
    const script = commands!.replaceAll('http://localhost:3000', origin).replaceAll('127.0.0.1:4000', `127.0.0.1:${port}`).replace('node_modules/.bin/node', process.execPath);
    const shell = spawn('bash', ['-c', script], { cwd, detached: true, env: { ...process.env, KEY: key }, stdio: ['ignore', 'pipe', 'pipe'] });
    groups.push(shell.pid!);
    let output = '';
    shell.stdout.on('data', (chunk: Buffer) => (output += chunk));
    shell.stderr.on('data', (chunk: Buffer) => (output += chunk));

    // What the commands, the receiver and the server printed, for a failure to say why.
    await expect.poll(() => output, { timeout: 20_000 }).toMatch(/avatar\.ready av_\w+ ready$/m).catch((error: Error) => {
      throw new Error(`${error.message}\n--- commands and receiver ---\n${output}\n--- server ---\n${log}`);
    });
    expect(output).toMatch(/"webhook_url":"http:\/\/127\.0\.0\.1:\d+\/webhooks"/);
  }, 60_000);
});
