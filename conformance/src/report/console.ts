// Live progress on a terminal: one line per check as it ends, the failure's detail
// under it, and notes (waits for a rate-limit window) when asked for.
import { describeSpent } from '../budget.ts';
import type { Writable } from 'node:stream';
import type { ProgressEvent } from '../options.ts';
import type { CheckResult, Report } from './model.ts';
import { BOUND_MEANS, CONSOLE_MARKS, consoleLegend, counted } from './text.ts';

export interface ConsoleOptions {
  stream: Writable & { isTTY?: boolean };
  color: boolean;
  verbose: boolean;
}

const MARK = CONSOLE_MARKS;
const COLOR = { passed: 32, failed: 31, warned: 35, skipped: 33, not_applicable: 90 } as const;

export function paint(enabled: boolean, code: number, text: string): string {
  return enabled ? `\u001b[${code}m${text}\u001b[0m` : text;
}

export function consoleProgress(options: ConsoleOptions): (event: ProgressEvent) => void {
  const { stream, color, verbose } = options;
  let done = 0;
  let total = 0;
  return (event) => {
    if (event.type === 'start') {
      total = event.total;
      // The bound is stated before any request, so that a reader knows when to expect the verdict.
      stream.write(`Conformance run: ${event.baseUrl}, profile ${event.profile}, ${counted(event.total, 'check')}, implementation profile: ${event.implementation}, ends within ${event.boundSeconds} s\n`);
      // The bound is an upper limit worked out from timings, far above what a quick run takes: said so where it is first read.
      stream.write(paint(color, 90, `bound: ${event.boundSeconds} s, an upper limit and not an estimate: ${BOUND_MEANS} (--help: "The bound")\n`));
      // The marks below mean nothing to a first reader without it.
      stream.write(paint(color, 90, `${consoleLegend()}\n`));
      // Stated before the first create, so that a reader knows what the run may cost before it does.
      if (event.budget) stream.write(`budget: ${event.budget}\n`);
      // The seed is printed before anything is sent, so that even a run cut short can be replayed.
      if (event.generated) stream.write(`generated inputs: ${counted(event.generated.count, 'request')}, seed ${event.generated.seed} (--seed ${event.generated.seed} replays them)\n`);
    } else if (event.type === 'setup-warning') {
      stream.write(paint(color, 33, `setup warning: ${event.message}\n`));
    } else if (event.type === 'note') {
      if (verbose) stream.write(paint(color, 90, `    … ${event.message}\n`));
    } else if (event.type === 'check-end') {
      done++;
      stream.write(`${resultLine(event.result, color, `${String(done).padStart(String(total).length)}/${total}`)}\n`);
      if (event.result.outcome === 'failed' || event.result.outcome === 'warned' || (verbose && event.result.reason)) stream.write(detail(event.result, color));
      if (event.result.warnings) stream.write(warningLines(event.result, color));
    }
  };
}

export function resultLine(result: CheckResult, color: boolean, prefix = ''): string {
  const outcome = paint(color, COLOR[result.outcome], MARK[result.outcome]);
  const seconds = result.durationMs >= 100 ? paint(color, 90, ` (${(result.durationMs / 1000).toFixed(1)} s)`) : '';
  // A check that did not run says whether that fails the verdict; one that ran, whether its flaw would.
  const mark = result.optional && result.outcome !== 'not_applicable' ? ' [optional]' : !result.required && result.outcome === 'skipped' ? ' [not required]' : '';
  const optional = mark ? paint(color, 90, mark) : '';
  return `${prefix ? `${prefix} ` : ''}${outcome} ${result.id}  ${result.title}${optional}${seconds}`;
}

export function detail(result: CheckResult, color: boolean): string {
  const lines: string[] = [];
  if (result.reason) lines.push(`${result.outcome === 'skipped' ? 'skipped' : 'not applicable'}: ${result.reason}`);
  const failure = result.failure;
  if (failure) {
    // A warning says so before its clause, so that it never reads as the failure that failed the run.
    lines.push(result.outcome === 'warned' ? paint(color, COLOR.warned, `warning, does not decide the verdict: ${failure.clause}: ${failure.message}`) : paint(color, 31, `${failure.clause}: ${failure.message}`));
    if (failure.expected !== undefined) lines.push(`expected: ${failure.expected}`);
    if (failure.received !== undefined) lines.push(`received: ${failure.received}`);
    if (failure.fix) lines.push(`fix: ${failure.fix}`);
    for (const exchange of failure.exchanges) lines.push(...exchange.split('\n').map((line) => paint(color, 90, `  ${line}`)));
    if (failure.reproduction?.length) lines.push('reproduce:', ...failure.reproduction.map((command) => `  ${command}`));
  }
  return lines.map((line) => `      ${line}\n`).join('');
}

/** What held but is worth knowing (a slow receiver), under the check's line. */
export function warningLines(result: CheckResult, color: boolean): string {
  // Notes on a check that held (a slow answer, time judged with the runner busy): not the
  // ! of an optional check's flaw.
  return (result.warnings ?? []).map((warning) => `      ${paint(color, 33, `note: ${warning}`)}\n`).join('');
}

/**
 * The closing lines; the very last one is always `N passed, N failed, N skipped`, failed
 * being the failures that decide the verdict: warnings and not-applicable checks are
 * counted on the line before.
 */
export function summary(report: Report, color: boolean): string {
  const lines: string[] = [''];
  for (const warning of report.setup ?? []) lines.push(paint(color, 33, `setup warning: ${warning}`));
  if (report.abort) {
    lines.push(paint(color, 31, `${report.abort.kind}: ${report.abort.message}`));
  } else {
    const failed = report.results.filter((r) => r.outcome === 'failed');
    if (failed.length > 0) lines.push(paint(color, 31, `Failed: ${failed.map((r) => `${r.id} (${r.failure?.clause ?? r.clauses.join(', ')})`).join(', ')}`));
    const warned = report.results.filter((r) => r.outcome === 'warned');
    if (warned.length > 0) lines.push(paint(color, COLOR.warned, `Warnings (optional checks; they do not decide the verdict): ${warned.map((r) => `${r.id} (${r.failure?.clause ?? r.clauses.join(', ')})`).join(', ')}`));
    const notRun = report.results.filter((r) => r.required && r.outcome === 'skipped');
    // One line each: joined, seventeen reasons made one line no terminal could show.
    if (notRun.length > 0) lines.push(paint(color, 33, `Required but not run (the verdict fails): ${counted(notRun.length, 'check')}`), ...notRun.map((r) => paint(color, 33, `  ${r.id}: ${r.reason}`)));
    const uncovered = report.clauses.filter((c) => c.outcome === 'failed').map((c) => c.id);
    if (uncovered.length > 0) lines.push(`Clauses broken: ${uncovered.join(', ')}`);
    const spent = report.budget?.spent;
    if (spent) lines.push(`Spent: ${describeSpent(spent)}; the budget stated ${report.budget!.planned.credits ?? '?'} at most, counting every create as charged${report.budget!.maxCredits === undefined ? '' : `, --max-credits ${report.budget!.maxCredits}`}.`);
    if (report.bound?.reached) lines.push(paint(color, 33, `The run reached its bound of ${report.bound.seconds} s: the checks it had not finished are reported not run.`));
    if (report.subject === 'proxy' && report.counts.passed + report.counts.failed === 0) lines.push(paint(color, 33, 'No check had traffic to judge: point a client at the proxy and let it create, poll and download (the reasons are above).'));
    const noted = report.results.filter((r) => r.warnings?.length).length;
    const what =
      report.subject === 'receiver'
        ? `receiver ${report.baseUrl}, ${counted(report.deliveries, 'delivery', 'deliveries')} sent${noted ? `, ${counted(noted, 'check')} with notes` : ''}`
        : report.subject === 'proxy'
          ? `traffic to ${report.baseUrl}, ${counted(report.requests, 'request')} and ${counted(report.deliveries, 'webhook')} seen`
          : `profile ${report.profile}, ${counted(report.requests, 'request')}, ${counted(report.deliveries, 'webhook')} received`;
    lines.push(
      `${report.verdict === 'pass' ? paint(color, 32, 'PASS') : paint(color, 31, 'FAIL')}: ${what}, ${(report.durationMs / 1000).toFixed(1)} s${report.bound ? ` (bound ${report.bound.seconds} s)` : ''}` +
        (report.counts.notApplicable ? `, ${counted(report.counts.notApplicable, 'check')} not applicable to ${report.subject === 'proxy' ? 'the traffic seen' : 'this profile'}` : '') +
        (report.counts.warned ? `, ${counted(report.counts.warned, 'warning')} (optional checks that do not decide the verdict)` : ''),
    );
  }
  lines.push(`${report.counts.passed} passed, ${report.counts.failed} failed, ${report.counts.skipped} skipped`);
  return `${lines.join('\n')}\n`;
}
