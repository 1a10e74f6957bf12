// The README as a new user reads it: its in-page links lead somewhere, and its
// quickstart, pasted whole into bash, ends with a downloaded video.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
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

describe('README.md', () => {
  it('links only to headings it has', () => {
    const anchors = new Set([...README.matchAll(/^#{1,6} (.+)$/gm)].map((m) => anchorOf(m[1]!)));
    const links = [...README.matchAll(/\]\(#([^)]+)\)/g)].map((m) => m[1]!);

    expect(links.length).toBeGreaterThan(10);
    expect(links.filter((link) => !anchors.has(link))).toEqual([]);
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
