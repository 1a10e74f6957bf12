// A real `node server/src/main.ts` in a child process, for the tests that kill, restart or
// multiply the server. It listens on a port the OS gives (PORT=0), prints the address it
// listens on, and is ready once /healthz answers 200 there; a child that exits or stays
// silent fails the start with everything it wrote, so a failure says why.
import { spawn, type ChildProcess } from 'node:child_process';

const MAIN = new URL('../../src/main.ts', import.meta.url).pathname;
const LISTENING = /^avatar service listening on (http:\/\/\S+)$/m;

export interface ServerProcess {
  child: ChildProcess;
  url: string;
  port: number;
  /** Every line the child wrote to stdout and stderr, in order. */
  logs: string[];
  /** Resolves once the child has written a line that matches (it may have already). */
  waitForLine(pattern: RegExp, timeoutMs?: number): Promise<string>;
  /** Sends `signal` and resolves once the child has exited. */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

export async function startServerProcess(env: Record<string, string | undefined>, { timeoutMs = 30_000 } = {}): Promise<ServerProcess> {
  const child = spawn(process.execPath, [MAIN], { env: { ...process.env, PORT: '0', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const logs: string[] = [];
  const lineListeners = new Set<() => void>();
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    const fail = (why: string) => {
      clearTimeout(timer);
      reject(new Error(`the server ${why}; it wrote:\n${logs.join('\n') || '(nothing)'}`));
    };
    const timer = setTimeout(() => fail(`did not report its address within ${timeoutMs} ms`), timeoutMs);
    const read = (chunk: Buffer) => {
      const lines = chunk.toString().split('\n').filter(Boolean);
      logs.push(...lines);
      for (const listener of lineListeners) listener();
      for (const line of lines) {
        const found = LISTENING.exec(line);
        if (found) {
          clearTimeout(timer);
          resolve(found[1]!);
        }
      }
    };
    child.stdout!.on('data', read);
    child.stderr!.on('data', read);
    child.once('exit', (code, signal) => fail(`exited (${signal ?? `code ${code}`}) before it listened`));
  });
  // Listening is not ready: the health check answers 200 once the store answers too.
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const healthy = await fetch(`${url}/healthz`).then((r) => r.ok, () => false);
    if (healthy) break;
    if (Date.now() > deadline || child.exitCode !== null) throw new Error(`the server at ${url} never answered /healthz with 200; it wrote:\n${logs.join('\n')}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    child,
    url,
    port: Number(new URL(url).port),
    logs,
    waitForLine(pattern, timeoutMs = 10_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = logs.find((line) => pattern.test(line));
          if (!found) return;
          lineListeners.delete(check);
          clearTimeout(timer);
          resolve(found);
        };
        const timer = setTimeout(() => {
          lineListeners.delete(check);
          reject(new Error(`no line matching ${pattern} within ${timeoutMs} ms; the server wrote:\n${logs.join('\n')}`));
        }, timeoutMs);
        lineListeners.add(check);
        check();
      });
    },
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
  };
}
