// Videos, rendered off the event loop: each in a process of its own (videoProcess.ts),
// one at a time, the others waiting their turn. A process rather than a thread: a render
// holds some 150 MB at its peak (the speech engine's WebAssembly, the drawings), which a
// thread would leave in the server's memory and a process gives back when it ends, and a
// render that goes wrong cannot take the server with it. Starting one costs about 0.1 s.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { ArtifactUnavailableError } from '../domain/engine.ts';
import { ENCODE_TIMEOUT_MS } from './ffmpeg.ts';
import type { VideoRequest } from './video.ts';

export interface Videos {
  /** The MP4 of a video with these inputs. */
  mp4(request: VideoRequest): Promise<Buffer>;
  /** Stops the renders under way and refuses new ones. */
  close(): Promise<void>;
}

const RENDER_SCRIPT = fileURLToPath(new URL('./videoProcess.ts', import.meta.url));
/**
 * Renders asked for and not finished, at most: one runs at a time (it keeps both cores
 * of a small machine busy), the rest wait. Past this a download is refused with a 503
 * and Retry-After rather than queued without end.
 */
export const MAX_PENDING_RENDERS = 16;
/** Longest a render may take: its encoding's limit, and time to draw and speak before it. */
const RENDER_TIMEOUT_MS = ENCODE_TIMEOUT_MS + 30_000;
/** The end of a failed render's messages kept for the error. */
const STDERR_KEPT_CHARS = 2000;

function render(request: VideoRequest, running: Set<ChildProcess>): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [RENDER_SCRIPT], { stdio: ['pipe', 'pipe', 'pipe'] });
    running.add(child);
    const out: Buffer[] = [];
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      stderr = (stderr + chunk).slice(-STDERR_KEPT_CHARS);
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), RENDER_TIMEOUT_MS);
    child.on('error', (error) => {
      clearTimeout(timer);
      running.delete(child);
      reject(new Error(`the render process could not start: ${error.message}`));
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      running.delete(child);
      if (code === 0) resolve(Buffer.concat(out));
      else reject(new Error(signal ? `the render was stopped (${signal})` : stderr.trim() || `the render process exited ${code}`));
    });
    child.stdin.on('error', () => {}); // a process that died early is reported by 'close'
    child.stdin.end(JSON.stringify(request));
  });
}

export function createVideos(): Videos {
  const running = new Set<ChildProcess>();
  let pending = 0;
  let closed = false;
  // Renders run one after another: each waits for the one before to settle.
  let last: Promise<unknown> = Promise.resolve();
  return {
    async mp4(request) {
      if (closed) throw new ArtifactUnavailableError('the engine is closing', { retryable: true });
      if (pending >= MAX_PENDING_RENDERS) throw new ArtifactUnavailableError(`${pending} videos are being rendered already`, { retryable: true });
      pending++;
      const turn = last.then(() => (closed ? Promise.reject(new Error('the engine closed')) : render(request, running)));
      last = turn.catch(() => undefined);
      try {
        return await turn;
      } catch (error) {
        throw new ArtifactUnavailableError(`the video could not be rendered: ${(error as Error).message}`, { cause: error });
      } finally {
        pending--;
      }
    },
    async close() {
      closed = true;
      for (const child of running) child.kill('SIGTERM');
    },
  };
}
