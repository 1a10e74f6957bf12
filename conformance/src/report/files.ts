// The report files a run was asked for (--report-json, --report-junit, --report-md,
// --report-html), the same for a service run, a receiver run and the proxy. A file that
// cannot be written is said on stderr and the run's verdict stands: the console already
// showed it.
import { writeFileSync } from 'node:fs';
import { toHtml } from './html.ts';
import { toJson } from './json.ts';
import { toJunit } from './junit.ts';
import { toMarkdown } from './markdown.ts';
import type { Report } from './model.ts';

export interface ReportFiles {
  'report-json'?: string | undefined;
  'report-junit'?: string | undefined;
  'report-md'?: string | undefined;
  'report-html'?: string | undefined;
}

export function writeReports(report: Report, files: ReportFiles, err: (text: string) => void): void {
  const outputs: [string | undefined, () => string][] = [
    [files['report-json'], () => toJson(report)],
    [files['report-junit'], () => toJunit(report)],
    [files['report-md'], () => toMarkdown(report)],
    [files['report-html'], () => toHtml(report)],
  ];
  for (const [file, render] of outputs) {
    if (!file) continue;
    try {
      writeFileSync(file, render());
    } catch (error) {
      err(`cannot write ${file}: ${error instanceof Error ? error.message : String(error)}\n`);
    }
  }
}
