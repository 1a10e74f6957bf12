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
