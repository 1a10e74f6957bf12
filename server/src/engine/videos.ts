// Videos, rendered off the event loop: each in a process of its own (videoProcess.ts),
// started by the job runner's worker while the job is processing, into a file the job
// then keeps. A process rather than a thread: a render holds up to a few hundred MB at
// its peak (the speech engine's WebAssembly, the drawings), which a thread would leave in
// the server's memory and a process gives back when it ends, and a render that goes
// wrong cannot take the server with it. Starting one costs about 0.1 s.
//
// Fair between accounts: RENDER_SLOTS renders run at once, an account never more than
// one of them, and a free slot goes to the accounts waiting in turn (round-robin), so one
// account's long videos hold a slot of their own, never the others'.
import { lstatSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runChild, type ChildFailure } from './child.ts';
import { encodeTimeoutMs } from './ffmpeg.ts';
import { recordRenderProcess } from './renderFolders.ts';
import { videoFrames } from './timeline.ts';
import type { VideoRequest } from './video.ts';

/** Renders one video into the file `out`; rejects with the reason it could not. */
export type Render = (request: VideoRequest, out: string, signal: AbortSignal) => Promise<void>;

export interface Videos {
  /**
   * Renders the video of account `account` into `out` when its turn comes; `signal`
   * stops it, waiting or rendering.
   */
  render(account: string, request: VideoRequest, out: string, signal: AbortSignal): Promise<void>;
  /** Stops the renders under way and refuses new ones. */
  close(): Promise<void>;
}

const RENDER_SCRIPT = fileURLToPath(new URL('./videoProcess.ts', import.meta.url));
/**
 * Renders at once: two keep both cores of a small machine busy (a render draws, speaks and
 * encodes on one core: its encoder runs one thread), and bound the memory renders take to
 * twice one's.
 */
export const RENDER_SLOTS = 2;

/**
 * The folder where render processes keep what Node compiles for them (its compile cache:
 * the engine's modules with their types stripped, and V8's code for them), so that each
 * render does not strip and compile them again, a sixth of a render process's CPU. One
 * folder per user of the machine, kept across restarts; since what it holds is code that
 * runs, it is used only while it is this user's alone (undefined otherwise, and renders
 * compile as before). NODE_COMPILE_CACHE, where set, names it instead.
 */
export function renderCompileCache(dir = join(tmpdir(), `avatar-video-compile-cache-${process.getuid?.() ?? 'user'}`), env: NodeJS.ProcessEnv = process.env): string | undefined {
  // One the operator set (NODE_COMPILE_CACHE) is kept: Node already runs this process
  // from it, and it outlives a temp folder made for one run (as the test suite's is).
  if (env.NODE_COMPILE_CACHE) return env.NODE_COMPILE_CACHE;
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const found = lstatSync(dir);
    const owned = process.getuid === undefined || found.uid === process.getuid();
    return found.isDirectory() && owned && (found.mode & 0o077) === 0 ? dir : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Renders in a process of its own: the request and the output file on its stdin. It runs
 * in a process group of its own with its encoder, recorded in the render's folder (the
 * output file's, renderFolders.ts), and is given this process's ID, so that it ends
 * itself, encoder and all, once this process is gone, even killed (videoProcess.ts).
 */
export const renderInProcess: Render = async (request, out, signal) => {
  // Checked before every render, not once: a folder removed meanwhile (a temp cleaner) and
  // made again by another user must not be used.
  const compileCache = renderCompileCache();
  try {
    // SIGTERM when stopped: the render process stops its encoder, then itself. Its time:
    // the encoding's, and time to draw and speak before it.
    const folder = dirname(out);
    let recorded: Promise<void> = Promise.resolve();
    await runChild(process.execPath, ['--expose-gc', RENDER_SCRIPT, folder, String(process.pid)], {
      ...(compileCache ? { env: { ...process.env, NODE_COMPILE_CACHE: compileCache } } : {}),
      input: JSON.stringify({ ...request, out }),
      timeoutMs: encodeTimeoutMs(videoFrames(request.video.script)) + 30_000,
      signal,
      stopSignal: 'SIGTERM',
      group: true,
      // A folder that cannot take the record still renders: the process ends itself anyway.
      onSpawn: (pid) => (recorded = recordRenderProcess(folder, pid).catch(() => undefined)),
    }).finally(() => recorded);
  } catch (error) {
    const failure = error as ChildFailure;
    throw new Error(`the video could not be rendered: ${failure.stderr || `the render process ${failure.message}`}`, { cause: error });
  }
};

interface Waiting {
  start(): void;
  signal: AbortSignal;
  drop(): void;
}

export function createVideos(options: { render?: Render; slots?: number } = {}): Videos {
  const render = options.render ?? renderInProcess;
  const slots = options.slots ?? RENDER_SLOTS;
  const closing = new AbortController();
  /** Renders waiting, per account, in the order asked. */
  const queues = new Map<string, Waiting[]>();
  /**
   * Accounts with renders waiting and none running, in the order their turn comes. One
   * whose render ends, with more waiting, joins the back: behind every account that asked
   * meanwhile.
   */
  const turns: string[] = [];
  const running = new Set<string>();

  function next(): void {
    while (running.size < slots && turns.length > 0) {
      const account = turns.shift()!;
      const queue = queues.get(account)!;
      const task = queue.shift()!;
      if (queue.length === 0) queues.delete(account);
      running.add(account);
      task.start();
    }
  }

  return {
    render(account, request, out, signal) {
      if (closing.signal.aborted) return Promise.reject(new Error('the engine is closing'));
      const stop = AbortSignal.any([signal, closing.signal]);
      return new Promise<void>((resolve, reject) => {
        const task: Waiting = {
          signal: stop,
          start() {
            stop.removeEventListener('abort', task.drop);
            // The slot is given on before the caller hears: the next render has started by then.
            const release = () => {
              running.delete(account);
              if (queues.has(account)) turns.push(account);
              next();
            };
            render(request, out, stop).then(
              () => (release(), resolve()),
              (error: unknown) => (release(), reject(error)),
            );
          },
          // Stopped while waiting: it leaves the queue without taking a turn.
          drop() {
            const queue = queues.get(account);
            const at = queue?.indexOf(task) ?? -1;
            if (at >= 0) {
              queue!.splice(at, 1);
              if (queue!.length === 0) {
                queues.delete(account);
                if (turns.includes(account)) turns.splice(turns.indexOf(account), 1);
              }
            }
            reject(stop.reason ?? new Error('the render was stopped'));
          },
        };
        if (stop.aborted) return task.drop();
        stop.addEventListener('abort', task.drop, { once: true });
        const queue = queues.get(account);
        if (queue) queue.push(task);
        else {
          queues.set(account, [task]);
          // An account rendering already takes its turn when that render ends.
          if (!running.has(account)) turns.push(account);
        }
        next();
      });
    },
    async close() {
      closing.abort();
    },
  };
}
