// Render processes end with the server that started them. A real `node server/src/main.ts`
// renders a long video and is killed with SIGKILL, which runs no handler of its own: its
// render process and the render's FFmpeg end within 5 s all the same, and the next server
// started on the data folder removes the folder the render left. The sweep that does so
// also kills what is left of a render group, and only processes that name the render's
// folder.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { createAccount } from '../../src/domain/accounts.ts';
import { systemClock } from '../../src/domain/clock.ts';
import { ownerName, RENDER_PID_FILE, RENDERS_DIR, sweepRenderFolders } from '../../src/engine/renderFolders.ts';
import { openStore } from '../../src/runtime.ts';
import { promptAvatar } from '../support/harness.ts';
import { startServerProcess, type ServerProcess } from '../support/serverProcess.ts';
import { createTestStoreEnv, scaled, type TestStoreEnv } from '../support/stores.ts';

/** The processes of this machine whose command line or working folder names `path`, with their command lines. */
function processesNaming(path: string): { pid: number; commandLine: string }[] {
  const found: { pid: number; commandLine: string }[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/u.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')) continue; // dead, awaiting its parent
      const commandLine = readFileSync(`/proc/${name}/cmdline`, 'utf8').replaceAll('\0', ' ');
      let cwd = '';
      try {
        cwd = readlinkSync(`/proc/${name}/cwd`);
      } catch {
        // not ours to read
      }
      if (commandLine.includes(path) || cwd.startsWith(path)) found.push({ pid: Number(name), commandLine });
    } catch {
      // ended meanwhile
    }
  }
  return found;
}

/** Polls `probe` every 50 ms until it holds or `limitMs` passes; the time it took, or null. */
async function within(limitMs: number, probe: () => boolean): Promise<number | null> {
  const started = Date.now();
  for (;;) {
    if (probe()) return Date.now() - started;
    if (Date.now() - started > limitMs) return null;
    await sleep(50);
  }
}

const children: ServerProcess[] = [];
const stores: TestStoreEnv[] = [];
afterAll(async () => {
  for (const child of children.splice(0)) await child.stop('SIGKILL');
  for (const store of stores.splice(0)) await store.drop();
});

// The render processes are the engine's, whatever the store: registered in the embedded
// project alone, as a store's tests are registered only where that store runs (never
// skipped). Process groups and /proc are Linux's.
const LINUX = process.platform === 'linux';
if (!scaled && LINUX) describe('a server killed with SIGKILL while it renders', () => {
  it('leaves no render process or FFmpeg 5 s later, and the next start removes the render folder', async () => {
    const storeEnv = await createTestStoreEnv();
    stores.push(storeEnv);
    const config = loadConfig(storeEnv.env);
    const store = await openStore(config, { serving: false });
    const { api_key: key } = await createAccount(store, systemClock, { monthlyCredits: 100_000 });
    await store.close();
    // No grace at shutdown: the second server's render of the same job is stopped at once.
    const env = { ...storeEnv.env, LOG_LEVEL: 'warn', JOB_POLL_MS: '50', ENGINE_AVATAR_MS: '0', ENGINE_VIDEO_MS: '0', SHUTDOWN_GRACE_MS: '0' };
    const headers = { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' };
    const rendersRoot = join(config.dataDir, RENDERS_DIR);

    const first = await startServerProcess(env);
    children.push(first);
    const avatar = (await (await fetch(`${first.url}/v1/avatars`, { method: 'POST', headers, body: JSON.stringify(promptAvatar()) })).json()) as { id: string };
    let avatarStatus = '';
    for (let i = 0; i < 200 && avatarStatus !== 'ready'; i++) {
      avatarStatus = ((await (await fetch(`${first.url}/v1/avatars/${avatar.id}`, { headers })).json()) as { status: string }).status;
      if (avatarStatus !== 'ready') await sleep(25);
    }
    expect(avatarStatus).toBe('ready');
    // 80 s of video: its encoding takes seconds, so it is under way when the server dies.
    const script = Array.from({ length: 200 }, (_, i) => `word${i % 10}`).join(' ');
    const created = await fetch(`${first.url}/v1/avatar-videos`, { method: 'POST', headers, body: JSON.stringify({ avatar_id: avatar.id, script }) });
    expect(created.status, await created.clone().text()).toBe(202);

    const encoding = () => processesNaming(rendersRoot).some((p) => /ffmpeg/u.test(p.commandLine));
    expect(await within(20_000, encoding), 'the render never reached its encoder').not.toBeNull();
    const running = processesNaming(rendersRoot);
    expect(running.map((p) => p.commandLine).join('\n')).toMatch(/videoProcess\.ts/u);

    await first.stop('SIGKILL');
    const took = await within(5_000, () => processesNaming(rendersRoot).length === 0);
    expect(took, `still running 5 s after the kill:\n${processesNaming(rendersRoot).map((p) => `${p.pid} ${p.commandLine}`).join('\n')}`).not.toBeNull();
    const left = readdirSync(rendersRoot);
    expect(left).toEqual([`${first.child.pid}-${left[0]!.split('-')[1]}`]);

    const second = await startServerProcess(env);
    children.push(second);
    expect(existsSync(join(rendersRoot, left[0]!))).toBe(false);
    // The job it resumes renders again; a shutdown stops that render and removes its folder.
    const secondRenders = join(rendersRoot, `${second.child.pid}-`);
    const rendering = () => readdirSync(rendersRoot).some((owner) => join(rendersRoot, owner).startsWith(secondRenders) && readdirSync(join(rendersRoot, owner)).length > 0);
    expect(await within(20_000, rendering), 'the resumed job never rendered').not.toBeNull();
    await second.stop('SIGTERM');
    expect(processesNaming(rendersRoot)).toEqual([]);
    expect(readdirSync(rendersRoot).flatMap((owner) => readdirSync(join(rendersRoot, owner)))).toEqual([]);
  }, 60_000);
});

if (LINUX) describe('the start-up sweep of render folders', () => {
  const spawned: ChildProcess[] = [];
  afterAll(() => {
    for (const child of spawned) child.kill('SIGKILL');
  });
  /** A process that runs until killed, leading a group of its own, with `args` on its command line. */
  const idle = (args: string[]) => {
    const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)', ...args], { detached: true, stdio: 'ignore' });
    spawned.push(child);
    return child;
  };
  const gone = (child: ChildProcess) => new Promise<void>((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve() : child.once('exit', () => resolve())));

  it("kills a stopped server's render processes that name their folder, removes its folders, and leaves a running server's alone", async () => {
    const root = await mkdtemp(join(tmpdir(), 'renders-sweep-'));
    try {
      // A server that no longer runs: its ID with a start time no process has.
      const dead = join(root, `${process.pid}-1`);
      const render = join(dead, 'video-a');
      const stranger = join(dead, 'video-b');
      const live = join(root, ownerName(), 'video-c');
      await Promise.all([render, stranger, live].map((folder) => mkdir(folder, { recursive: true })));
      const renderProcess = idle([render]);
      // Recorded as a render, but its command line names no render folder: never ours to kill.
      const unrelated = idle(['something-else']);
      await writeFile(join(render, RENDER_PID_FILE), `${renderProcess.pid}\n`);
      await writeFile(join(stranger, RENDER_PID_FILE), `${unrelated.pid}\n`);

      const swept = await sweepRenderFolders(root);

      expect(swept).toEqual({ renders: 2, processes: 1 });
      await gone(renderProcess);
      expect(renderProcess.signalCode).toBe('SIGKILL');
      expect(unrelated.exitCode === null && unrelated.signalCode === null).toBe(true);
      expect(existsSync(dead)).toBe(false);
      expect(existsSync(live)).toBe(true);
      expect(await sweepRenderFolders(join(root, 'none'))).toEqual({ renders: 0, processes: 0 });
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});
