// `compare <before.json> <after.json>`: what changed between two runs' JSON reports, for
// CI baselines. A regression is a check that newly fails, a required check that passed
// and now did not run or is gone, or a run that passed and now does not; the command
// exits 1 on one, 0 otherwise, and 2 when a file is not a report it can read. A check
// newly warned (an optional check that found a flaw) is listed, and is no regression:
// it does not decide the verdict either.
import { readFileSync } from 'node:fs';
import { EXIT_CODES, type Report } from './model.ts';
import { counted } from './text.ts';

export interface ReportChange {
  id: string;
  before: string | undefined;
  after: string | undefined;
  required: boolean;
}

export interface Comparison {
  newlyFailing: ReportChange[];
  newlyWarned: ReportChange[];
  newlyPassing: ReportChange[];
  newlySkipped: ReportChange[];
  appeared: ReportChange[];
  disappeared: ReportChange[];
  verdict: { before: Report['verdict']; after: Report['verdict'] };
  /** The changes that make the comparison fail, each in one line. */
  regressions: string[];
}

type Compared = Pick<Report, 'verdict' | 'results'>;

export function compareReports(before: Compared, after: Compared): Comparison {
  const earlier = new Map(before.results.map((r) => [r.id, r]));
  const later = new Map(after.results.map((r) => [r.id, r]));
  const change = (id: string): ReportChange => ({ id, before: earlier.get(id)?.outcome, after: later.get(id)?.outcome, required: Boolean(later.get(id)?.required ?? earlier.get(id)?.required) });
  const both = after.results.filter((r) => earlier.has(r.id)).map((r) => change(r.id));
  const newlyFailing = both.filter((c) => c.after === 'failed' && c.before !== 'failed');
  const newlyWarned = both.filter((c) => c.after === 'warned' && c.before !== 'warned');
  const newlyPassing = both.filter((c) => c.after === 'passed' && c.before !== 'passed');
  const newlySkipped = both.filter((c) => c.after === 'skipped' && c.before !== 'skipped');
  const appeared = after.results.filter((r) => !earlier.has(r.id)).map((r) => change(r.id));
  const disappeared = before.results.filter((r) => !later.has(r.id)).map((r) => change(r.id));
  const regressions = [
    ...newlyFailing.map((c) => `${c.id} now fails (was ${c.before})`),
    // A required check that stops running fails the verdict just as a failure does.
    ...newlySkipped.filter((c) => c.required && c.before === 'passed').map((c) => `${c.id} is required and no longer runs (was passed)`),
    ...disappeared.filter((c) => c.required && c.before === 'passed').map((c) => `${c.id} passed before and is no longer in the report`),
    ...(before.verdict === 'pass' && after.verdict !== 'pass' ? [`the verdict went from pass to ${after.verdict}`] : []),
  ];
  return { newlyFailing, newlyWarned, newlyPassing, newlySkipped, appeared, disappeared, verdict: { before: before.verdict, after: after.verdict }, regressions };
}

/** A warned check is an optional one; any other that the verdict does not require need not run. */
function label(change: ReportChange): string {
  if (change.after === 'warned') return ' [optional]';
  return change.required ? '' : ' [not required]';
}

export function describeComparison(comparison: Comparison, names: { before: string; after: string }): string {
  const lines = [`Comparing ${names.before} (verdict ${comparison.verdict.before}) with ${names.after} (verdict ${comparison.verdict.after})`];
  const section = (title: string, changes: ReportChange[], show: (c: ReportChange) => string) => {
    if (changes.length === 0) return;
    lines.push(`${title} (${changes.length}):`, ...changes.map((c) => `  ${c.id}${label(c)}: ${show(c)}`));
  };
  section('Newly failing', comparison.newlyFailing, (c) => `${c.before} -> failed`);
  section('Newly warned (no regression: optional, it does not decide the verdict)', comparison.newlyWarned, (c) => `${c.before} -> warned`);
  section('Newly skipped', comparison.newlySkipped, (c) => `${c.before} -> skipped`);
  section('Newly passing', comparison.newlyPassing, (c) => `${c.before} -> passed`);
  section('Appeared', comparison.appeared, (c) => `new, ${c.after}`);
  section('Disappeared', comparison.disappeared, (c) => `was ${c.before}`);
  const changed = comparison.newlyFailing.length + comparison.newlyWarned.length + comparison.newlySkipped.length + comparison.newlyPassing.length + comparison.appeared.length + comparison.disappeared.length;
  if (changed === 0) lines.push('No check changed its outcome.');
  lines.push(comparison.regressions.length ? `REGRESSION: ${counted(comparison.regressions.length, 'regression')}: ${comparison.regressions.join('; ')}` : 'No regression.');
  return `${lines.join('\n')}\n`;
}

const HELP = (command: string) => `Usage: ${command} compare <before.json> <after.json>

Prints what changed between two reports written by --report-json (of the same kind of
run): checks that newly fail, newly warned, newly skipped, newly pass, appeared or
disappeared. A newly warned check (an optional one that found a flaw) is no regression.

Exit codes: 0 no regression; 1 a regression: a check newly fails, a required check
that passed no longer runs or is gone, or the verdict went from pass to fail or
aborted; 2 bad usage (a file missing or not a JSON report).
`;

export interface CompareIo {
  out: (text: string) => void;
  err: (text: string) => void;
  command: string;
}

export function compareCommand(args: readonly string[], io: CompareIo): number {
  if (args.includes('--help') || args.includes('-h')) {
    io.out(HELP(io.command));
    return 0;
  }
  const usage = (message: string) => {
    io.err(`usage: ${message} (see compare --help)\n`);
    return EXIT_CODES.usage;
  };
  if (args.length !== 2 || args.some((a) => a.startsWith('-'))) return usage(`compare takes two report files, before and after; got ${args.length === 0 ? 'none' : args.join(' ')}`);
  const reports: Compared[] = [];
  for (const file of args) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(readFileSync(file, 'utf8'));
    } catch (error) {
      return usage(`cannot read ${file}: ${error instanceof Error ? error.message : String(error)}`);
    }
    if (!isReport(parsed)) return usage(`${file} is not a report of --report-json: it has no verdict or no results list of checks with id and outcome`);
    reports.push(parsed);
  }
  const comparison = compareReports(reports[0]!, reports[1]!);
  io.out(describeComparison(comparison, { before: args[0]!, after: args[1]! }));
  return comparison.regressions.length ? EXIT_CODES.fail : EXIT_CODES.pass;
}

function isReport(value: unknown): value is Compared {
  if (typeof value !== 'object' || value === null) return false;
  const { verdict, results } = value as { verdict?: unknown; results?: unknown };
  return (
    typeof verdict === 'string' &&
    Array.isArray(results) &&
    results.every((r) => typeof r === 'object' && r !== null && typeof (r as { id?: unknown }).id === 'string' && typeof (r as { outcome?: unknown }).outcome === 'string')
  );
}
