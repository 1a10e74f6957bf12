// A child run in a process group of its own (a render process) is stopped with what it
// started (its encoder): by the signal that stops it, and when it is killed for running
// past its time.
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChildFailure, runChild } from '../../src/engine/child.ts';

/** Starts a grandchild that runs until killed, writes its ID to the file named first, and waits. */
const PARENT = `
const { spawn } = require('node:child_process');
const { writeFileSync } = require('node:fs');
const grandchild = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
writeFileSync(process.argv[1], String(grandchild.pid));
setInterval(() => {}, 1000);`;

/** Whether process `pid` runs (a zombie, dead and awaiting its parent, does not). */
function runs(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return false;
  }
}

/** Polls until `probe` holds, for at most `limitMs`; whether it did. */
async function until(limitMs: number, probe: () => boolean): Promise<boolean> {
  const deadline = Date.now() + limitMs;
  while (!probe()) {
    if (Date.now() > deadline) return false;
    await sleep(20);
  }
  return true;
}

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'child-group-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe.skipIf(process.platform !== 'linux')('a child in a process group of its own', () => {
  it.each([
    ['stopped by its signal', { stop: true, timeoutMs: 30_000 }],
    ['killed past its time', { stop: false, timeoutMs: 1_000 }],
  ])('is %s with the process it started', async (name, { stop, timeoutMs }) => {
    const file = join(dir, `${stop ? 'stopped' : 'timed-out'}.pid`);
    const controller = new AbortController();
    let spawned = 0;
    const running = runChild(process.execPath, ['-e', PARENT, file], { timeoutMs, signal: controller.signal, stopSignal: 'SIGTERM', group: true, onSpawn: (pid) => (spawned = pid) });
    const ended = running.then(
      () => null,
      (error: unknown) => error,
    );
    expect(await until(10_000, () => existsSync(file) && readFileSync(file, 'utf8') !== ''), 'the child never started its own').toBe(true);
    const grandchild = Number(readFileSync(file, 'utf8'));
    expect(runs(grandchild)).toBe(true);

    if (stop) controller.abort();
    const error = await ended;

    expect(error).toBeInstanceOf(ChildFailure);
    expect(spawned).toBeGreaterThan(0);
    expect(await until(5_000, () => !runs(grandchild)), `${name}: the process it started still runs`).toBe(true);
  });
});
