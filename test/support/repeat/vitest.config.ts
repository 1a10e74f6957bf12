import { defineConfig } from 'vitest/config';
import { useRunTempFolder } from '../runTempFolder.ts';

// The suite `test/testRepeat.test.ts` hands `npm run test:repeat`: one test that always
// passes and one that fails on every other run, never picked up by the project's own suite.
// Its runs keep their temporary files as the project's do, so that a failed one's is named.
useRunTempFolder();

export default defineConfig({ test: { root: import.meta.dirname, include: ['*.check.ts'] } });
