import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { useRunTempFolder } from './test/support/runTempFolder.ts';

// The suite starts hundreds of Node processes (servers, the runner's CLI, the operator
// command), and each spent most of its start stripping types from and compiling the same
// unchanged modules: half a second to a second of CPU. Node's compile cache keeps that
// work between processes (a changed file is compiled anew); the workers and every child
// they start inherit the setting. One the developer set is kept.
process.env.NODE_COMPILE_CACHE ??= join(import.meta.dirname, 'node_modules', '.cache', 'node-compile-cache');

// Every temporary file of the run, the tests' and their children's, in one folder removed
// as the run ends, unless its tests failed (test/support/runTempFolder.ts).
useRunTempFolder();

/**
 * Files that take long whatever the machine (whole conformance runs, which wait on jobs,
 * windows and retries; rendered videos; servers started as processes), longest first.
 * Vitest starts the files it has no timings for largest first, and a fresh clone has no
 * timings: these small files started last and the run ended on one of them while the
 * other workers sat idle. Starting them first lets the short files fill in around them.
 */
const LONG_FILES = [
  'server/test/scaled/conformance.test.ts',
  'conformance/test/broken.test.ts',
  'conformance/test/independent.test.ts',
  'conformance/test/reference.test.ts',
  'test/packages.test.ts',
  'conformance/test/readings.test.ts',
  'conformance/test/cli.test.ts',
  'test/e2e/conformance.test.ts',
  'server/test/startup.test.ts',
  'conformance/test/bound.test.ts',
  'test/e2e/prismProxy.test.ts',
  'test/docs-site.test.ts',
  'server/test/engine/video.test.ts',
  'conformance/test/proxy.test.ts',
  'server/test/scaled/multiProcess.test.ts',
  'server/test/adminHostile.test.ts',
];

/**
 * LONG_FILES first, whichever project they belong to, then Vitest's order (each project
 * in turn, failed and longer files first). The projects share the workers, and Vitest
 * queues them one after the other: the scaled project's longest file started only once
 * the embedded project's queue was empty, and the run ended on it.
 */
class LongFilesFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const ordered = await super.sort(files);
    const rank = (spec: TestSpecification) => {
      const at = LONG_FILES.findIndex((path) => spec.moduleId.endsWith(`/${path}`));
      return at < 0 ? LONG_FILES.length : at;
    };
    const position = new Map(ordered.map((spec, i) => [spec, i]));
    return [...ordered].sort((a, b) => rank(a) - rank(b) || position.get(a)! - position.get(b)!);
  }
}

// Two projects: everything on the embedded store, and the server's suite again on
// PostgreSQL + Redis, which the scaled project's global setup starts (or takes from
// TEST_DATABASE_URL and TEST_REDIS_URL). The JSON report feeds the plain "N passed, N failed"
// line that .ci/run prints.
export default defineConfig({
  test: {
    reporters: ['default', 'json'],
    // Here, not in the reporter's own options, so that --outputFile.json on the command
    // line (as npm run test:repeat gives it) takes its place.
    outputFile: { json: '.reports/vitest.json' },
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Two test files per core: most of the suite's time is waiting (jobs, windows, webhook
    // retries, child processes), and one file per core left the cores idle a third of the
    // time. Per core, so that every machine carries the load this one is tested under; a
    // test that fails when other files share the machine is a flake to fix at its cause.
    maxWorkers: Math.min(8, 2 * availableParallelism()),
    sequence: { sequencer: LongFilesFirst },
    projects: [
      {
        extends: true,
        test: { name: 'embedded', include: ['**/test/**/*.test.ts'], exclude: ['**/node_modules/**', 'server/test/scaled/**'], env: { TEST_STORE: 'embedded' } },
      },
      {
        extends: true,
        test: {
          name: 'scaled',
          include: ['server/test/**/*.test.ts'],
          // Files that never open a store: the configuration, the domain's rules, the
          // engine's timeline, the embedded store's own halves, the bound on a Redis reply,
          // the statement groups' rule and the workers' batcher and pump. They run in the
          // embedded project already; run again here they would prove nothing more about
          // PostgreSQL + Redis and only lengthen npm test. The memory store's own suite
          // needs no PostgreSQL either.
          exclude: [
            '**/node_modules/**',
            'server/test/storage/memoryStore.test.ts',
            'server/test/config.test.ts',
            'server/test/domain/**',
            'server/test/engine/timeline.test.ts',
            'server/test/engine/videoPlayback.test.ts',
            'server/test/storage/embedded*.test.ts',
            'server/test/storage/redisReplyWithin.test.ts',
            'server/test/storage/statementGroup.test.ts',
            'server/test/workers/batcher.test.ts',
            'server/test/workers/pump.test.ts',
          ],
          env: { TEST_STORE: 'scaled' },
          globalSetup: ['server/test/support/scaledServices.ts'],
        },
      },
    ],
  },
});
