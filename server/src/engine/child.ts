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
  /**
   * Runs it in a process group of its own, which every signal it is sent goes to: what it
   * starts (a render's encoder) is stopped with it, and killed with it once it has ended
   * otherwise than well. Also kept out of the terminal's group, so a Ctrl-C reaches the
   * server alone, which then stops it.
   */
  group?: boolean;
  /** Called with its process ID once it has started. */
  onSpawn?: (pid: number) => void;
}

/** The process groups of the children running with `group`, killed when this process exits however it exits but SIGKILL. */
const runningGroups = new Set<number>();
let exitHook = false;

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // The group has ended.
  }
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
    const group = options.group === true;
    const stopSignal = options.stopSignal ?? 'SIGKILL';
    // A group's child is stopped here, group-wide, rather than by spawn's own signal, which kills only it.
    const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: 'pipe', detached: group, ...(group ? {} : { signal: options.signal, killSignal: stopSignal }) });
    const stop = (signal: NodeJS.Signals) => (group && child.pid !== undefined ? killGroup(child.pid, signal) : child.kill(signal));
    const aborted = () => stop(stopSignal);
    if (group && child.pid !== undefined) {
      runningGroups.add(child.pid);
      if (!exitHook) {
        exitHook = true;
        process.on('exit', () => {
          for (const pid of runningGroups) killGroup(pid, 'SIGKILL');
        });
      }
      if (options.signal?.aborted) aborted();
      else options.signal?.addEventListener('abort', aborted, { once: true });
    }
    if (child.pid !== undefined) options.onSpawn?.(child.pid);
    const out: Buffer[] = [];
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      stderr = (stderr + chunk).slice(-STDERR_KEPT_CHARS);
    });
    const timer = setTimeout(() => stop('SIGKILL'), options.timeoutMs);
    const ended = () => {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', aborted);
      if (child.pid !== undefined) runningGroups.delete(child.pid);
    };
    child.on('error', (error) => {
      ended();
      reject(new ChildFailure(error.name === 'AbortError' ? 'was stopped' : `could not start: ${error.message}`));
    });
    child.on('close', (code, signal) => {
      ended();
      // A child that ended otherwise than well may leave what it started behind.
      if (group && code !== 0 && child.pid !== undefined) killGroup(child.pid, 'SIGKILL');
      if (code === 0) resolve(Buffer.concat(out));
      else reject(new ChildFailure(signal ? `was stopped (${signal})` : `exited ${code}`, stderr.trim()));
    });
    child.stdin.on('error', () => {}); // a child that died early is reported by 'close'
    child.stdin.end(options.input);
  });
}
