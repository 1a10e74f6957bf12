import { defineConfig } from 'vitest/config';

// The JSON report feeds the plain "N passed, N failed" line that .ci/run prints.
export default defineConfig({
  test: {
    include: ['**/test/**/*.test.ts'],
    exclude: ['**/node_modules/**'],
    reporters: ['default', ['json', { outputFile: '.reports/vitest.json' }]],
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
