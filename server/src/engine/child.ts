// Runs a program of the engine's (the encoder, a render process) to its end: what it
// writes on stdout is the result, the end of what it writes on stderr says why it failed.
// A child that runs past its time is killed; `signal` stops it sooner.
import { spawn } from 'node:child_process';

/** The end of a failed child's messages kept for its error. */
const STDERR_KEPT_CHARS = 2000;

export interface ChildOptions {
  cwd?: string;
  /** Its environment; this process's by default. */
  env?: NodeJS.ProcessEnv;
  /** Written to its stdin, which is then closed (at once, without it). */
  input?: string;
  /** Longest it may run before it is killed (SIGKILL). */
  timeoutMs: number;
  /** Stops it with `stopSignal`. */
  signal?: AbortSignal;
  /** What `signal` sends: SIGKILL by default; SIGTERM lets a child stop the children it has started. */
  stopSignal?: NodeJS.Signals;
}

/** Why a child did not end well, in words that fit after its name ("FFmpeg exited 1: ..."). */
export class ChildFailure extends Error {
  override name = 'ChildFailure';
  /** The end of its stderr, trimmed, once it has exited; null when it never ran or was stopped by `signal`. */
  readonly stderr: string | null;

  constructor(message: string, stderr: string | null = null) {
    super(message);
    this.stderr = stderr;
  }
}

/** Its stdout once it exits 0; a ChildFailure when it cannot start, exits otherwise or is stopped. */
export function runChild(command: string, args: readonly string[], options: ChildOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: 'pipe', signal: options.signal, killSignal: options.stopSignal ?? 'SIGKILL' });
    const out: Buffer[] = [];
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      stderr = (stderr + chunk).slice(-STDERR_KEPT_CHARS);
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(new ChildFailure(error.name === 'AbortError' ? 'was stopped' : `could not start: ${error.message}`));
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve(Buffer.concat(out));
      else reject(new ChildFailure(signal ? `was stopped (${signal})` : `exited ${code}`, stderr.trim()));
    });
    child.stdin.on('error', () => {}); // a child that died early is reported by 'close'
    child.stdin.end(options.input);
  });
}
