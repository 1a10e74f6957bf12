// Where a render keeps its files while it runs (the MP4 until the store has kept it, the
// render process's drawings and speech), and the start-up sweep of what a server that was
// killed left there.
//
// Each server process has a folder of its own under the root, named after its process ID
// and start time, and each render a folder inside it, which the job removes at its end
// (success or failure). A server that was killed (SIGKILL, a crash, the machine's OOM
// killer) removes nothing: its render processes end themselves when they see it gone
// (videoProcess.ts), and the next server to start on the same data folder removes its
// folder, after killing any render process or FFmpeg of it still running (render.pid, the
// render's process group, each member checked to be ours by its command line first).
// Several servers may share the root (workers of PostgreSQL + Redis on one machine): a
// folder whose server still runs is left alone.
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The root's name in the data folder (runtime.ts). */
export const RENDERS_DIR = 'renders';
/** In a render's folder: the process ID of its render process, the leader of its process group. */
export const RENDER_PID_FILE = 'render.pid';

/** The root when none is given (tests that make an engine of their own): one per user of the machine. */
export const defaultRendersRoot = (): string => join(tmpdir(), `avatar-video-renders-${process.getuid?.() ?? 'user'}`);

/**
 * When process `pid` started, in clock ticks since boot (field 22 of /proc/<pid>/stat),
 * which with the ID names one process for as long as the machine runs, though IDs are
 * reused; null where there is no /proc (not Linux) or no such process.
 */
function startTicks(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command's name, in parentheses, may hold spaces: the fields after it are counted.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}

/** This process's folder's name: its ID and start time. */
export function ownerName(pid = process.pid): string {
  return `${pid}-${startTicks(pid) ?? 'x'}`;
}

/** Whether the server that named a folder `name` (ownerName) still runs. */
function ownerRuns(name: string): boolean {
  const match = /^(\d+)-(\d+|x)$/u.exec(name);
  if (!match) return false;
  const pid = Number(match[1]);
  if (pid === process.pid) return match[2] === (startTicks(pid) ?? 'x');
  if (match[2] !== 'x') return startTicks(pid) === match[2];
  // Without /proc, a process with that ID counts as the server: a folder kept too long
  // is better than one taken from a server still rendering into it.
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** A new folder for one render, in this process's folder under `root` (made if need be, this user's alone). */
export async function makeRenderFolder(root: string): Promise<string> {
  const mine = join(root, ownerName());
  await mkdir(mine, { recursive: true, mode: 0o700 });
  return mkdtemp(join(mine, 'video-'));
}

/** Records the render process of the render in `folder`, for a sweep after this server is killed. */
export async function recordRenderProcess(folder: string, pid: number): Promise<void> {
  await writeFile(join(folder, RENDER_PID_FILE), `${pid}\n`);
}

/**
 * Kills what is left of the render in `folder` whose process group is `group`: every
 * process of the group whose command line names the folder (the render process is given
 * it, FFmpeg writes its MP4 there), so that a process ID reused by anything else is never
 * killed. Linux only (it reads /proc); elsewhere the render processes end themselves.
 */
function killRenderGroup(group: number, folder: string): number {
  let killed = 0;
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((name) => /^\d+$/u.test(name));
  } catch {
    return 0;
  }
  for (const pid of pids) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      // After the name: state, parent, process group.
      const processGroup = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
      if (processGroup !== group) continue;
      const commandLine = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      const ours = commandLine.some((arg) => arg === folder || arg.startsWith(`${folder}/`)) || readlinkSync(`/proc/${pid}/cwd`).startsWith(`${folder}/`);
      if (!ours) continue;
      process.kill(Number(pid), 'SIGKILL');
      killed++;
    } catch {
      // Gone meanwhile, or not ours to read or kill.
    }
  }
  return killed;
}

export interface Swept {
  /** Folders of render removed. */
  renders: number;
  /** Render processes and encoders killed. */
  processes: number;
}

/**
 * Removes what servers no longer running left under `root`: their render processes and
 * encoders still running, then their folders. Run at start-up, before this server renders.
 */
export async function sweepRenderFolders(root: string): Promise<Swept> {
  const swept: Swept = { renders: 0, processes: 0 };
  let owners: string[];
  try {
    owners = await readdir(root);
  } catch {
    return swept; // no root yet: nothing rendered here
  }
  for (const owner of owners) {
    if (ownerRuns(owner)) continue;
    const folder = join(root, owner);
    const renders = await readdir(folder).catch(() => [] as string[]);
    for (const render of renders) {
      const pid = Number((await readFile(join(folder, render, RENDER_PID_FILE), 'utf8').catch(() => '')).trim());
      if (Number.isInteger(pid) && pid > 1) swept.processes += killRenderGroup(pid, join(folder, render));
      swept.renders++;
    }
    await rm(folder, { recursive: true, force: true });
  }
  return swept;
}
