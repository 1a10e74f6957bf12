// What the commands that measure under load (`conformance:under-load`, `test:repeat`)
// share around their own work: their flags read (usage on --help, exit 2 naming the
// flag and the rule on a bad one), the folder their runs' reports go to (made if
// missing; a temporary one removed afterwards), and the busy loops beside the work.
import type { ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { underLoad, type Load } from './busyLoops.ts';

/** A flag refused: its message names the flag and the rule it breaks. */
export class UsageError extends Error {}

/** A flag's whole number of at least `least`, or `fallback` when the flag is not given. */
export function wholeNumber(flag: string, value: string | undefined, least: number, fallback: number): number {
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value) || Number(value) < least) throw new UsageError(`${flag} must be a whole number of ${least} or more (was "${value}")`);
  return Number(value);
}

export interface Reports {
  dir: string;
  /** Whether the folder is the one --report-dir named, kept afterwards. */
  kept: boolean;
}

interface Command<A extends { busy: number; reportDir: string | undefined }> {
  name: string;
  usage: string;
  /** The flags read, or 'help'; a UsageError for a bad one. */
  parse(argv: string[]): A | 'help';
  /** The prefix of the temporary reports folder when --report-dir is not given. */
  reportsPrefix: string;
  /** The child under way, which a signal stops too. */
  current(): ChildProcess | undefined;
  work(args: A, reports: Reports, load: Load): Promise<number>;
}

/** Runs a measuring command over `argv` and returns its exit code. */
export async function measured<A extends { busy: number; reportDir: string | undefined }>(argv: string[], command: Command<A>): Promise<number> {
  let args: A;
  try {
    const parsed = command.parse(argv);
    if (parsed === 'help') {
      process.stdout.write(command.usage);
      return 0;
    }
    args = parsed;
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`${command.name}: ${error.message}\n${command.usage}`);
    return 2;
  }
  const kept = args.reportDir !== undefined;
  const dir = args.reportDir === undefined ? mkdtempSync(join(tmpdir(), command.reportsPrefix)) : resolve(args.reportDir);
  mkdirSync(dir, { recursive: true });
  try {
    return await underLoad(command.name, args.busy, command.current, (load) => command.work(args, { dir, kept }, load));
  } finally {
    if (!kept) rmSync(dir, { recursive: true, force: true });
  }
}
