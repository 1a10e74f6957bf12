// The operator command (`npm run admin`) run as an operator runs it, a process of its own
// beside a serving server, on that server's store.
import { spawn } from 'node:child_process';
import { expect } from 'vitest';

const ADMIN = new URL('../../src/admin.ts', import.meta.url).pathname;

export interface Exit {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the command with `args` on the store `env()` names (read at each call: the store may be made later). */
export function adminCommand(env: () => Record<string, string>) {
  function admin(...args: string[]): Promise<Exit> {
    const child = spawn(process.execPath, [ADMIN, ...args], { env: { ...process.env, LOG_LEVEL: 'warn', ...env() }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    return new Promise((resolve) => child.once('close', (code) => resolve({ code, stdout, stderr })));
  }
  /** Its `--json` answer, after it said nothing on stderr and exited 0. */
  async function json(...args: string[]) {
    const exit = await admin(...args, '--json');
    expect(exit.stderr).toBe('');
    expect(exit.code).toBe(0);
    return JSON.parse(exit.stdout);
  }
  return { admin, json };
}
