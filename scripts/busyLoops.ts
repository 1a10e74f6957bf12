// Load on demand for the commands that measure under load (`conformance:under-load`,
// `test:repeat`): child processes that spin, one per core by default. Each looks every so
// many turns whether its parent is still there and ends by itself when it is gone, so a
// killed command leaves no spinning process behind.
import { spawn, type ChildProcess } from 'node:child_process';

const SPIN = 'const parent = process.ppid; for (let turn = 1; ; turn++) if (turn % 10_000_000 === 0 && process.ppid !== parent) process.exit(0);';
/** The end of a loop's error output, kept to say why it stopped early. */
const OUTPUT_TAIL_CHARS = 8000;

export interface BusyLoop {
  child: ChildProcess;
  output(): string;
}

export async function startBusyLoops(count: number): Promise<BusyLoop[]> {
  const loops: BusyLoop[] = [];
  for (let i = 0; i < count; i++) {
    const child = spawn(process.execPath, ['-e', SPIN], { stdio: ['ignore', 'ignore', 'pipe'] });
    let tail = '';
    child.stderr!.on('data', (chunk: Buffer) => (tail = (tail + chunk.toString('utf8')).slice(-OUTPUT_TAIL_CHARS)));
    loops.push({ child, output: () => tail.trim() });
    try {
      await new Promise<void>((done, fail) => {
        child.once('spawn', done);
        child.once('error', (error) => fail(new Error(`busy loop ${i + 1} did not start: ${error.message}`)));
      });
    } catch (error) {
      killAll(loops);
      throw error;
    }
  }
  return loops;
}

export function killAll(loops: readonly BusyLoop[]): void {
  for (const { child } of loops) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
}

/** The loops that ended before they were killed: the load was lighter than asked. */
export function stoppedEarly(loops: readonly BusyLoop[]): BusyLoop[] {
  return loops.filter(({ child }) => child.exitCode !== null || child.signalCode !== null);
}

/** What work done under load may ask of it. */
export interface Load {
  /** Whether SIGINT or SIGTERM came: the work stops starting anything new. */
  interrupted(): boolean;
  /** Says so when loops ended before the work did (the load was lighter than asked). */
  sayIfLighter(): void;
}

/**
 * Runs `work` with `count` busy loops beside it, and exits with its code. The loops are
 * killed whatever ends it: its end, an error, SIGINT or SIGTERM (which also stop the
 * child `current()` names, and are said on stderr), the process's exit. A loop that does
 * not start is said on stderr with code 3, before any work.
 */
export async function underLoad(name: string, count: number, current: () => ChildProcess | undefined, work: (load: Load) => Promise<number>): Promise<number> {
  let loops: BusyLoop[] = [];
  process.once('exit', () => killAll(loops));
  let interrupted = false;
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      interrupted = true;
      killAll(loops);
      current()?.kill(signal);
      process.stderr.write(`${name}: ${signal}: the busy loops and the run under way stopped\n`);
    });
  }
  try {
    try {
      loops = await startBusyLoops(count);
    } catch (error) {
      process.stderr.write(`${name}: ${(error as Error).message}\n`);
      return 3;
    }
    return await work({
      interrupted: () => interrupted,
      sayIfLighter: () => {
        const stopped = stoppedEarly(loops);
        if (stopped.length > 0 && !interrupted) process.stdout.write(`${name}: ${stopped.length} busy loop(s) ended before the runs did, so the load was lighter than asked; one wrote: ${stopped[0]!.output() || '(nothing)'}\n`);
      },
    });
  } finally {
    killAll(loops);
  }
}
