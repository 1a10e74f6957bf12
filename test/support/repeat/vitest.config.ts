import { defineConfig } from 'vitest/config';

// The suite `test/testRepeat.test.ts` hands `npm run test:repeat`: one test that always
// passes and one that fails on every other run, never picked up by the project's own suite.
export default defineConfig({ test: { root: import.meta.dirname, include: ['*.check.ts'] } });
