// Fails on the first, third, ... run: each run counts itself in a file of the folder the
// test names, so the flake is there on demand rather than by chance.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';

it('always holds', () => {
  expect(1 + 1).toBe(2);
});

it('fails on every other run', () => {
  const counter = join(process.env.REPEAT_COUNTER_DIR!, 'runs');
  const run = (existsSync(counter) ? Number(readFileSync(counter, 'utf8')) : 0) + 1;
  writeFileSync(counter, String(run));
  expect(run % 2, `run ${run} is odd`).toBe(0);
});
