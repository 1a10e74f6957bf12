import { defineConfig } from 'vitest/config';

// Two projects: everything on the embedded store, and the server's suite again on
// PostgreSQL + Redis, which the scaled project's global setup starts (or takes from
// TEST_DATABASE_URL and TEST_REDIS_URL). The JSON report feeds the plain "N passed, N failed"
// line that .ci/run prints.
export default defineConfig({
  test: {
    reporters: ['default', ['json', { outputFile: '.reports/vitest.json' }]],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Two test files at a time, whatever the machine: most of the suite's time is waiting
    // (jobs, windows, webhook retries, child processes), so two files keep two cores busy
    // where one left them idle; a test that fails when another file shares the machine
    // is a flake to fix at its cause.
    maxWorkers: 2,
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
