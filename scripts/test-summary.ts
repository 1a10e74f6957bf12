// Prints the plain closing line CI reads, "N passed, N failed", from Vitest's JSON
// report. When the run stopped before Vitest (lint, stale generated files, types), it
// counts that step as one failure rather than claiming a clean run.
import { existsSync, readFileSync } from 'node:fs';

const [reportPath = '.reports/vitest.json', exitCode = '0'] = process.argv.slice(2);

if (!existsSync(reportPath)) {
  console.log(`0 passed, ${exitCode === '0' ? 0 : 1} failed`);
} else {
  const report = JSON.parse(readFileSync(reportPath, 'utf8')) as { numPassedTests: number; numFailedTests: number; numPendingTests: number; numTodoTests: number };
  const failed = report.numFailedTests + (report.numFailedTests === 0 && exitCode !== '0' ? 1 : 0);
  const skipped = report.numPendingTests + report.numTodoTests;
  console.log(`${report.numPassedTests} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
}
