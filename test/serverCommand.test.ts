// The server's command has one home, `npm start`: the container and the benchmark run
// it with the same Node flags (the young generation's size: docs/benchmarks.md,
// "Sizing a deployment").
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SERVER_NODE_FLAGS } from '../scripts/bench/procs.ts';

const ROOT = resolve(import.meta.dirname, '..');
const [shellExec, ...start] = String(JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).scripts.start).split(/\s+/);

describe('the server command', () => {
  it('replaces npm\'s shell, so a signal to `npm start` reaches the server itself', () => {
    expect(shellExec).toBe('exec');
  });

  it('sizes the young generation and the heap limit on purpose', () => {
    expect(start).toEqual(['node', '--max-semi-space-size=16', '--max-old-space-size=256', 'server/src/main.ts']);
  });

  it('is the container\'s command too', () => {
    const cmd = /^CMD (\[.*\])$/m.exec(readFileSync(join(ROOT, 'Dockerfile'), 'utf8'))![1]!;

    expect(JSON.parse(cmd)).toEqual(start);
  });

  it('is what the benchmark runs', () => {
    expect(['node', ...SERVER_NODE_FLAGS, 'server/src/main.ts']).toEqual(start);
  });
});
