// `node scripts/conformance-independent.ts [--report-json <file>]`: the runner in the core
// profile against a fresh instance of the in-repo independent implementation
// (conformance/test/fixtures/independent.ts), driven through its profile file alone and
// the fixture's timings, exactly as the tests drive it (optionsForIndependent), both in
// this one process as in the tests. It prints what the CLI prints (the bound it states
// included), writes the JSON report when asked and exits with the verdict's code, once
// its output is out. A process of its own so that `npm run conformance:under-load` can
// kill a run that outlives its bound.
import { parseArgs } from 'node:util';
import { consoleProgress, summary } from '../conformance/src/report/console.ts';
import { writeReports } from '../conformance/src/report/files.ts';
import { runConformance } from '../conformance/src/run.ts';
import { startIndependent } from '../conformance/test/fixtures/independent.ts';
import { optionsForIndependent } from '../conformance/test/helpers.ts';

/** As the CLI: the process ends this long after its verdict at the latest, whatever is still open. */
const EXIT_FLUSH_MS = 2000;

function exit(code: number): void {
  process.exitCode = code;
  setTimeout(() => process.exit(code), EXIT_FLUSH_MS).unref();
  process.stdout.write('', () => process.stderr.write('', () => process.exit(code)));
}

async function main(): Promise<number> {
  let values: { 'report-json'?: string | undefined };
  try {
    ({ values } = parseArgs({ strict: true, allowPositionals: false, options: { 'report-json': { type: 'string' } } }));
  } catch (error) {
    process.stderr.write(`conformance-independent: ${(error as Error).message}; usage: node scripts/conformance-independent.ts [--report-json <file>]\n`);
    return 2;
  }
  const fixture = await startIndependent();
  try {
    const report = await runConformance(optionsForIndependent(fixture, 'core', { onProgress: consoleProgress({ stream: process.stdout, color: false, verbose: false }) }));
    writeReports(report, values, (text) => process.stderr.write(text));
    process.stdout.write(summary(report, false));
    return report.exitCode;
  } finally {
    await fixture.close();
  }
}

main().then(exit, (error: unknown) => {
  process.stderr.write(`conformance-independent: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  exit(6);
});
