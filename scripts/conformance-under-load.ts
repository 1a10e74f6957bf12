// `npm run conformance:under-load [-- --runs K --busy N --target server|independent|both --report-dir <dir>]`:
// whether the verdicts of correct implementations hold on a loaded machine. It starts N
// busy loops (child processes that spin; by default one per core), then runs the core
// profile K times against this checkout's server, each on a fresh store made as
// `npm run conformance:local` makes it, and K times against a fresh instance of the
// in-repo independent implementation driven through its profile file alone, as the tests
// drive it. Each run is its own child process, killed when it outlives the bound it
// stated by a margin, which is a failure. It prints each run's figures (verdict, exit
// code, duration against the stated bound, the failed checks and the checks whose
// results say they were judged under load), then `K runs: P passed, F failed`, and exits
// 1 when a run did not pass, 2 on a bad flag, 3 when something it needs did not start.
// The busy loops are killed at the end whatever happens, and each ends by itself when
// this process is gone. A measurement, never a test: speed and stability are measured
// here or in the benchmark, not in a timed test.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { Report } from '../conformance/src/report/model.ts';
import { LOAD_WARNINGS } from '../conformance/src/stalls.ts';
import { ROOT } from './bench/procs.ts';
import { measured, UsageError, wholeNumber } from './measuredCommand.ts';
import { makeAccounts, RUNNER, startServer, stopServer, type RunningServer } from './conformance-server.ts';

const NAME = 'conformance:under-load';
const INDEPENDENT = join(ROOT, 'scripts', 'conformance-independent.ts');
const TARGETS = ['server', 'independent'] as const;
type Target = (typeof TARGETS)[number];
const TARGET_NAMES: Record<Target, string> = { server: "this project's server", independent: 'the independent implementation' };
const DEFAULT_RUNS = 4;
/** The runner's first line states its bound before its first request (src/bound.ts). */
const BOUND_STATED = /ends within (\d+) s/;
/**
 * Until a run states its bound it is given this long: its start is loading modules and
 * compiling the contract's schemas, some seconds on a loaded machine.
 */
const BOUND_STATED_TIMEOUT_MS = 120_000;
/**
 * A run is killed when it outlives its stated bound by this much: the bound already
 * holds its reports and its exit, so this is only the slack of a loaded machine
 * between the runner's clock and this process's.
 */
const OUTLIVED_MARGIN_MS = 15_000;
/** The end of a child's output, kept to show when a run did not pass. */
const OUTPUT_TAIL_CHARS = 8000;

const USAGE = `Usage: npm run conformance:under-load [-- <options>]

Runs the core profile against correct implementations with the machine's cores kept
busy, and says whether every verdict held.

  --runs <K>            runs against each target (default ${DEFAULT_RUNS})
  --busy <N>            busy loops beside the runs (default: one per core, here ${availableParallelism()}; 0: no load)
  --target <t>          server, independent or both (default both)
  --report-dir <dir>    keep each run's JSON report there (made if missing)
`;

interface Args {
  runs: number;
  busy: number;
  targets: Target[];
  reportDir: string | undefined;
}

const OPTIONS = { runs: { type: 'string' }, busy: { type: 'string' }, target: { type: 'string' }, 'report-dir': { type: 'string' }, help: { type: 'boolean', short: 'h' } } as const;

function parse(argv: string[]): Args | 'help' {
  // `--busy -1` is a number out of range, not a flag without its value: read it as
  // `--busy=-1`, so that the refusal names the rule the value breaks.
  const takesValue = (arg: string) => arg.startsWith('--') && OPTIONS[arg.slice(2) as keyof typeof OPTIONS]?.type === 'string';
  const args: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const [arg, next] = [argv[i]!, argv[i + 1]];
    if (takesValue(arg) && next !== undefined && /^-\d/.test(next)) {
      args.push(`${arg}=${next}`);
      i++;
    } else {
      args.push(arg);
    }
  }
  let values;
  try {
    ({ values } = parseArgs({
      args,
      strict: true,
      allowPositionals: false,
      options: OPTIONS,
    }));
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  if (values.help) return 'help';
  const target = values.target ?? 'both';
  if (target !== 'both' && !(TARGETS as readonly string[]).includes(target)) throw new UsageError(`--target must be server, independent or both (was "${target}")`);
  if (values['report-dir'] === '') throw new UsageError('--report-dir must name a folder (was empty)');
  return {
    runs: wholeNumber('--runs', values.runs, 1, DEFAULT_RUNS),
    busy: wholeNumber('--busy', values.busy, 0, availableParallelism()),
    targets: target === 'both' ? [...TARGETS] : [target as Target],
    reportDir: values['report-dir'],
  };
}

interface Figures {
  index: number;
  target: Target;
  passed: boolean;
  verdict: string;
  exitCode: number | null;
  /** The runner's own duration (its report), or the child's when there is no report. */
  durationMs: number;
  boundSeconds: number | undefined;
  failures: string[];
  /** Optional checks that found a flaw, which never decides the verdict. */
  warned: string[];
  underLoad: string[];
  /** Why the run failed outside the runner's verdict: killed, did not start, no report. */
  problem?: string;
  output: string;
}

interface ChildEnd {
  code: number | null;
  signal: NodeJS.Signals | null;
  boundSeconds: number | undefined;
  killedFor: string | undefined;
  wallMs: number;
  output: string;
}

/** The run under way, to pass a signal on to. */
let current: ChildProcess | undefined;

/** Waits for a run's child: killed when it states no bound in time, or outlives the one it stated by the margin. */
function awaitRunner(child: ChildProcess): Promise<ChildEnd> {
  current = child;
  const started = Date.now();
  let output = '';
  let boundSeconds: number | undefined;
  let killedFor: string | undefined;
  const kill = (why: string) => {
    killedFor = why;
    child.kill('SIGKILL');
  };
  let timer = setTimeout(() => kill(`stated no bound within ${BOUND_STATED_TIMEOUT_MS / 1000} s`), BOUND_STATED_TIMEOUT_MS);
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString('utf8')).slice(-OUTPUT_TAIL_CHARS);
    if (boundSeconds !== undefined) return;
    const stated = BOUND_STATED.exec(output);
    if (!stated) return;
    boundSeconds = Number(stated[1]);
    clearTimeout(timer);
    const bound = boundSeconds;
    timer = setTimeout(() => kill(`outlived its bound of ${bound} s by more than ${OUTLIVED_MARGIN_MS / 1000} s`), bound * 1000 + OUTLIVED_MARGIN_MS);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  return new Promise((done) => {
    child.once('error', (error) => {
      clearTimeout(timer);
      done({ code: null, signal: null, boundSeconds, killedFor: `did not start: ${error.message}`, wallMs: Date.now() - started, output });
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      done({ code, signal, boundSeconds, killedFor, wallMs: Date.now() - started, output: output.trim() });
    });
  });
}

function readReport(file: string): Report | undefined {
  if (!existsSync(file)) return undefined;
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as Report;
  } catch {
    return undefined;
  }
}

function figuresOf(index: number, target: Target, end: ChildEnd, reportFile: string): Figures {
  const report = readReport(reportFile);
  const failures = (report?.results ?? []).flatMap((r) => {
    if (r.outcome === 'failed') return [`${r.id} (${r.failure?.clause}): ${r.failure?.message}`];
    if (r.required && r.outcome === 'skipped') return [`${r.id}: required, not run: ${r.reason}`];
    return [];
  });
  // A check that found a flaw without failing: optional in the profile, it never decides the verdict.
  const warned = (report?.results ?? []).filter((r) => r.outcome !== 'failed' && r.failure).map((r) => `${r.id} (${r.failure?.clause}): ${r.failure?.message}`);
  const underLoad = (report?.results ?? []).flatMap((r) => (r.warnings ?? []).filter((w) => Object.values(LOAD_WARNINGS).some((head) => w.startsWith(head))).map((w) => `${r.id}: ${w}`));
  const problem = end.killedFor ?? (report ? undefined : `no report: the run ended with ${end.signal ? `signal ${end.signal}` : `code ${end.code}`}`);
  return {
    index,
    target,
    passed: !problem && end.code === 0 && report?.verdict === 'pass',
    verdict: report?.verdict ?? 'none',
    exitCode: end.code,
    durationMs: report?.durationMs ?? end.wallMs,
    boundSeconds: report?.bound?.seconds ?? end.boundSeconds,
    failures,
    warned,
    underLoad,
    ...(problem ? { problem } : {}),
    output: end.output,
  };
}

async function serverRun(index: number, reportFile: string): Promise<Figures> {
  const dataDir = mkdtempSync(join(tmpdir(), 'avatar-under-load-'));
  let server: RunningServer | undefined;
  try {
    const values = await makeAccounts(dataDir);
    try {
      server = await startServer(dataDir);
    } catch (error) {
      const output = (error as { output?: () => string }).output?.() ?? '';
      return { index, target: 'server', passed: false, verdict: 'none', exitCode: null, durationMs: 0, boundSeconds: undefined, failures: [], warned: [], underLoad: [], problem: `the server did not start: ${(error as Error).message}`, output: output || '(nothing)' };
    }
    const runner = spawn(process.execPath, [RUNNER, '--profile', 'core', '--no-color', '--report-json', reportFile], {
      cwd: ROOT,
      env: { ...process.env, ...values, CONFORMANCE_BASE_URL: server.url },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const figures = figuresOf(index, 'server', await awaitRunner(runner), reportFile);
    // A server that died under the run left the runner to say "unreachable"; its own output says why.
    if (server.child.exitCode !== null) return { ...figures, passed: false, problem: `the server stopped during the run (code ${server.child.exitCode})`, output: `${figures.output}\n--- the server wrote ---\n${server.output() || '(nothing)'}` };
    return figures;
  } finally {
    if (server) await stopServer(server);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function independentRun(index: number, reportFile: string): Promise<Figures> {
  const runner = spawn(process.execPath, [INDEPENDENT, '--report-json', reportFile], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  return figuresOf(index, 'independent', await awaitRunner(runner), reportFile);
}

function print(figures: Figures, total: number): void {
  const seconds = figures.durationMs / 1000;
  const bound = figures.boundSeconds === undefined ? 'no bound stated' : `bound ${figures.boundSeconds} s, ${(seconds / figures.boundSeconds).toFixed(3)} of it`;
  const lines = [`run ${figures.index}/${total}  ${figures.target.padEnd(11)}  ${figures.passed ? 'passed' : 'FAILED'}  verdict ${figures.verdict}, exit ${figures.exitCode ?? '-'}, ${seconds.toFixed(1)} s, ${bound}`];
  if (figures.problem) lines.push(`  ${figures.problem}`);
  lines.push(figures.failures.length === 0 ? '  failed checks: none' : `  failed checks (${figures.failures.length}):`, ...figures.failures.map((f) => `    ${f}`));
  if (figures.warned.length > 0) lines.push(`  optional checks that found a flaw (${figures.warned.length}, not deciding the verdict):`, ...figures.warned.map((w) => `    ${w}`));
  lines.push(figures.underLoad.length === 0 ? '  judged under load: none' : `  judged under load (${figures.underLoad.length} check${figures.underLoad.length === 1 ? '' : 's'}):`, ...figures.underLoad.map((u) => `    ${u}`));
  if (!figures.passed) lines.push('  its output ended with:', ...figures.output.split('\n').map((line) => `    | ${line}`));
  process.stdout.write(`${lines.join('\n')}\n`);
}

function main(argv: string[]): Promise<number> {
  return measured(argv, {
    name: NAME,
    usage: USAGE,
    parse,
    reportsPrefix: 'avatar-under-load-reports-',
    current: () => current,
    async work(args, { dir: reportDir, kept: keptReports }, load) {
      const plan = args.targets.flatMap((target) => Array.from({ length: args.runs }, () => target));
      process.stdout.write(`${NAME}: ${args.busy} busy loop${args.busy === 1 ? '' : 's'} on ${availableParallelism()} cores; the core profile ${args.runs} time${args.runs === 1 ? '' : 's'} against ${args.targets.map((t) => TARGET_NAMES[t]).join(' and ')}; reports in ${reportDir}${keptReports ? '' : ' (removed afterwards)'}\n`);
      const all: Figures[] = [];
      for (const [i, target] of plan.entries()) {
        if (load.interrupted()) break;
        const reportFile = join(reportDir, `${String(i + 1).padStart(2, '0')}-${target}.json`);
        const figures = target === 'server' ? await serverRun(i + 1, reportFile) : await independentRun(i + 1, reportFile);
        all.push(figures);
        print(figures, plan.length);
      }
      load.sayIfLighter();
      const failed = all.filter((f) => !f.passed).length;
      const notRun = plan.length - all.length;
      process.stdout.write(`${all.length} runs: ${all.length - failed} passed, ${failed} failed${notRun > 0 ? `, ${notRun} not run (interrupted)` : ''}\n`);
      return failed > 0 || notRun > 0 ? 1 : 0;
    },
  });
}

process.exitCode = await main(process.argv.slice(2));
