// The encoder of the built-in engine's videos: the static FFmpeg (4.1, with libx264 and
// AAC) that `@ffmpeg-installer/ffmpeg` carries inside its npm package for this platform,
// so `npm ci` is all the set-up there is and nothing is downloaded at run time. It runs
// as a child process: encoding never touches the event loop.
import { accessSync, chmodSync, constants } from 'node:fs';
import { runChild, type ChildFailure } from './child.ts';

/** Why a video could not be encoded; the message says what to do where there is something to do. */
export class EncoderError extends Error {
  override name = 'EncoderError';
}

/**
 * Longest an encoding of `frames` may take before it is stopped: a minute, and 20 ms a
 * frame on top. The longest video the contract allows (2,500 one-letter words: 1,000 s,
 * 25,000 frames) took 106 to 207 s to render on a 2-core machine loaded by other work,
 * 4 to 8 ms a frame, so this leaves more than twice the worst; a fixed limit of 120 s
 * stopped it.
 */
export function encodeTimeoutMs(frames: number): number {
  return 60_000 + 20 * frames;
}

let located: Promise<string> | undefined;

/**
 * The path of the packaged FFmpeg, made executable if the package was unpacked without
 * its mode (its only install script is a `chmod`, which `allowScripts` does not run).
 */
export function ffmpegPath(): Promise<string> {
  located ??= (async () => {
    let path: string;
    try {
      // The package throws a string, not an Error, when this platform has no binary.
      path = ((await import('@ffmpeg-installer/ffmpeg')) as { default: { path: string } }).default.path;
    } catch (error) {
      throw new EncoderError(`No FFmpeg for ${process.platform}-${process.arch} in @ffmpeg-installer/ffmpeg (${String(error)}); run npm ci on this machine.`);
    }
    try {
      accessSync(path, constants.X_OK);
    } catch {
      try {
        chmodSync(path, 0o755);
      } catch (error) {
        throw new EncoderError(`FFmpeg at ${path} is not executable and cannot be made so (${(error as Error).message}); run chmod +x on it.`);
      }
    }
    return path;
  })();
  located.catch(() => {
    located = undefined;
  });
  return located;
}

/**
 * Runs FFmpeg with `args` in `cwd` for at most `timeoutMs`; resolves when it exits 0, rejects with the end of its
 * messages otherwise. `signal` stops it.
 */
export async function runFfmpeg(args: string[], cwd: string, signal: AbortSignal | undefined, timeoutMs: number): Promise<void> {
  const path = await ffmpegPath();
  try {
    await runChild(path, ['-hide_banner', '-nostdin', '-loglevel', 'error', ...args], { cwd, timeoutMs, signal });
  } catch (error) {
    const failure = error as ChildFailure;
    throw new EncoderError(`FFmpeg ${failure.message}${failure.stderr === null ? '' : `: ${failure.stderr || 'no message'}`}`);
  }
}
