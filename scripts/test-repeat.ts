// `npm run test:repeat [-- --times N --busy K --report-dir <dir> [vitest arguments]]`: the
// suite (or the files named) run N times in a row with K busy loops beside it, then every
// test that failed in any run, with how often and the first line of its error. For
// developers before they push: a test that fails once in five runs under load is a flake
// to fix at its cause, and one run of `npm test` would not have shown it. Exits 1 when a
// test failed in any run (or a run ended without a report), 2 on a bad flag.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join, relative } from 'node:path';
import { parseArgs } from 'node:util';
import { ROOT } from './bench/procs.ts';
import { measured, UsageError, wholeNumber } from './measuredCommand.ts';
import { keptFolderIn } from '../test/support/runTempFolder.ts';

const NAME = 'test:repeat';
const VITEST = join(ROOT, 'node_modules', 'vitest', 'vitest.mjs');
const DEFAULT_TIMES = 3;
/** Of a run's output, the end is kept to show when it left no report (a crash, a bad flag of Vitest's). */
const OUTPUT_TAIL_CHARS = 8000;

const USAGE = `Usage: npm run test:repeat [-- <options>] [-- <vitest arguments>]

Runs the test suite several times in a row with the machine's cores kept busy, then lists
every test that failed in any run. Vitest's own arguments (files, --project, -t ...) come
after the options, or after a lone --.

  --times <N>           runs in a row (default ${DEFAULT_TIMES})
  --busy <K>            busy loops beside the runs (default: one per core, here ${availableParallelism()}; 0: no load)
  --report-dir <dir>    keep each run's Vitest JSON report there (made if missing)
  -h, --help            this text

Example: npm run test:repeat -- --times 5 --busy 2 conformance/test/exhaustion.test.ts
`;

export interface Args {
  times: number;
  busy: number;
  reportDir: string | undefined;
  vitestArgs: string[];
}

const OPTIONS = { times: { type: 'string' }, busy: { type: 'string' }, 'report-dir': { type: 'string' }, help: { type: 'boolean', short: 'h' } } as const;

export function parse(argv: string[]): Args | 'help' {
  // Our options first; from the first argument that is not one of them (or a lone --),
  // everything is Vitest's.
  const ours: string[] = [];
  let i = 0;
  for (; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') {
      i++;
      break;
    }
    const name = arg.replace(/^--?/, '').split('=')[0]!;
    const known = arg.startsWith('-') && (name in OPTIONS || name === 'h');
    if (!known) break;
    ours.push(arg);
    const option = OPTIONS[name as keyof typeof OPTIONS];
    if (option?.type === 'string' && !arg.includes('=')) {
      if (argv[i + 1] === undefined) throw new UsageError(`${arg} needs a value`);
      ours.push(argv[++i]!);
    }
  }
  let values;
  try {
    ({ values } = parseArgs({ args: ours, strict: true, allowPositionals: false, options: OPTIONS }));
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  if (values.help) return 'help';
  if (values['report-dir'] === '') throw new UsageError('--report-dir must name a folder (was empty)');
  return {
    times: wholeNumber('--times', values.times, 1, DEFAULT_TIMES),
    busy: wholeNumber('--busy', values.busy, 0, availableParallelism()),
    reportDir: values['report-dir'],
    vitestArgs: argv.slice(i),
  };
}

/** The part of Vitest's JSON report this command reads. */
interface VitestReport {
  numPassedTests: number;
  numFailedTests: number;
  testResults: Array<{
    name: string;
    status: string;
    message?: string;
    assertionResults: Array<{ fullName: string; status: string; failureMessages?: string[] }>;
  }>;
}

/** One test (or a whole file that failed before its tests ran) that failed at least once. */
export interface Failure {
  key: string;
  runs: number[];
  firstLine: string;
}

/** Every failed test of one run's report, keyed by file and full name. */
export function failuresOf(report: VitestReport): Array<{ key: string; firstLine: string }> {
  const failed: Array<{ key: string; firstLine: string }> = [];
  for (const file of report.testResults) {
    const where = relative(ROOT, file.name);
    const tests = file.assertionResults.filter((t) => t.status === 'failed');
    for (const test of tests) failed.push({ key: `${where} > ${test.fullName}`, firstLine: firstLine(test.failureMessages?.[0]) });
    // A file that failed with no failed test: its import or a hook threw.
    if (file.status === 'failed' && tests.length === 0) failed.push({ key: `${where} (the file itself)`, firstLine: firstLine(file.message) });
  }
  return failed;
}

function firstLine(message: string | undefined): string {
  // Vitest's messages carry colour codes when the terminal has them.
  const plain = (message ?? '').replace(/\x1b\[[0-9;]*m/g, '').trim();
  return plain.split('\n')[0]?.slice(0, 300) || '(no message)';
}

interface RunEnd {
  code: number | null;
  signal: NodeJS.Signals | null;
  wallMs: number;
  output: string;
}

let current: ChildProcess | undefined;

function runVitest(reportFile: string, vitestArgs: readonly string[]): Promise<RunEnd> {
  const started = Date.now();
  const child = spawn(process.execPath, [VITEST, 'run', '--reporter=dot', '--reporter=json', `--outputFile.json=${reportFile}`, ...vitestArgs], {
    cwd: ROOT,
    env: { ...process.env, FORCE_COLOR: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  current = child;
  let output = '';
  const keep = (chunk: Buffer) => (output = (output + chunk.toString('utf8')).slice(-OUTPUT_TAIL_CHARS));
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  return new Promise((done) => {
    child.once('error', (error) => done({ code: null, signal: null, wallMs: Date.now() - started, output: `did not start: ${error.message}` }));
    child.once('close', (code, signal) => done({ code, signal, wallMs: Date.now() - started, output: output.trim() }));
  });
}

function readReport(file: string): VitestReport | undefined {
  if (!existsSync(file)) return undefined;
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as VitestReport;
  } catch {
    return undefined;
  }
}

function main(argv: string[]): Promise<number> {
  return measured(argv, {
    name: NAME,
    usage: USAGE,
    parse,
    reportsPrefix: 'avatar-test-repeat-',
    current: () => current,
    async work(args, { dir: reportDir, kept: keptReports }, load) {
      const what = args.vitestArgs.length > 0 ? `vitest ${args.vitestArgs.join(' ')}` : 'the whole suite';
      process.stdout.write(`${NAME}: ${what}, ${args.times} time${args.times === 1 ? '' : 's'}, ${args.busy} busy loop${args.busy === 1 ? '' : 's'} on ${availableParallelism()} cores; reports in ${reportDir}${keptReports ? '' : ' (removed afterwards)'}\n`);
      const failures = new Map<string, Failure>();
      const broken: number[] = [];
      let done = 0;
      for (let run = 1; run <= args.times && !load.interrupted(); run++) {
        const reportFile = join(reportDir, `run-${String(run).padStart(2, '0')}.json`);
        const end = await runVitest(reportFile, args.vitestArgs);
        const report = readReport(reportFile);
        done++;
        if (!report) {
          broken.push(run);
          process.stdout.write(`run ${run}/${args.times}: no report (${end.signal ? `signal ${end.signal}` : `code ${end.code}`}, ${(end.wallMs / 1000).toFixed(1)} s); its output ended with:\n${end.output.split('\n').map((l) => `    | ${l}`).join('\n')}\n`);
          continue;
        }
        const failed = failuresOf(report);
        for (const { key, firstLine } of failed) {
          const seen = failures.get(key) ?? { key, runs: [], firstLine };
          seen.runs.push(run);
          failures.set(key, seen);
        }
        const kept = keptFolderIn(end.output);
        process.stdout.write(`run ${run}/${args.times}: ${report.numPassedTests} passed, ${report.numFailedTests} failed, ${(end.wallMs / 1000).toFixed(1)} s${failed.length > 0 ? `\n${failed.map((f) => `    ✗ ${f.key}`).join('\n')}` : ''}${kept ? `\n    its temporary files are kept in ${kept}` : ''}\n`);
      }
      load.sayIfLighter();
      const sorted = [...failures.values()].sort((a, b) => b.runs.length - a.runs.length || a.key.localeCompare(b.key));
      if (sorted.length > 0) {
        process.stdout.write(`\ntests that failed in at least one run (${sorted.length}):\n`);
        for (const failure of sorted) process.stdout.write(`  ${failure.runs.length}/${done}  ${failure.key}\n        runs ${failure.runs.join(', ')}: ${failure.firstLine}\n`);
      }
      process.stdout.write(`${done} runs: ${sorted.length} test${sorted.length === 1 ? '' : 's'} failed in at least one${broken.length > 0 ? `, ${broken.length} run${broken.length === 1 ? '' : 's'} left no report` : ''}${done < args.times ? `, ${args.times - done} not run (interrupted)` : ''}\n`);
      return sorted.length > 0 || broken.length > 0 || done < args.times ? 1 : 0;
    },
  });
}

if (import.meta.main) process.exitCode = await main(process.argv.slice(2));
