// Videos, rendered off the event loop: each in a process of its own (videoProcess.ts),
// one at a time, the others waiting their turn. A process rather than a thread: a render
// holds some 150 MB at its peak (the speech engine's WebAssembly, the drawings), which a
// thread would leave in the server's memory and a process gives back when it ends, and a
// render that goes wrong cannot take the server with it. Starting one costs about 0.1 s.
import { fileURLToPath } from 'node:url';
import { ArtifactUnavailableError } from '../domain/engine.ts';
import { runChild, type ChildFailure } from './child.ts';
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

/** Renders in a process of its own: the request on its stdin, the MP4 on its stdout. */
async function render(request: VideoRequest, signal: AbortSignal): Promise<Buffer> {
  try {
    // SIGTERM when the engine closes: the render process stops its encoder, then itself.
    return await runChild(process.execPath, [RENDER_SCRIPT], { input: JSON.stringify(request), timeoutMs: RENDER_TIMEOUT_MS, signal, stopSignal: 'SIGTERM' });
  } catch (error) {
    const failure = error as ChildFailure;
    throw new Error(failure.stderr || `the render process ${failure.message}`);
  }
}

export function createVideos(): Videos {
  const closing = new AbortController();
  let pending = 0;
  // Renders run one after another: each waits for the one before to settle.
  let last: Promise<unknown> = Promise.resolve();
  return {
    async mp4(request) {
      if (closing.signal.aborted) throw new ArtifactUnavailableError('the engine is closing', { retryable: true });
      if (pending >= MAX_PENDING_RENDERS) throw new ArtifactUnavailableError(`${pending} videos are being rendered already`, { retryable: true });
      pending++;
      const turn = last.then(() => (closing.signal.aborted ? Promise.reject(new Error('the engine closed')) : render(request, closing.signal)));
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
      closing.abort();
    },
  };
}
