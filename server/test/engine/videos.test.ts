// The folder where render processes keep what Node compiles for them: made private to the
// user running the server, and refused when others could write code into it.
import { chmodSync, mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { renderCompileCache } from '../../src/engine/videos.ts';

const scratch = mkdtempSync(join(tmpdir(), 'compile-cache-test-'));
/** An environment that names no compile cache (the test run's own names one). */
const NO_CACHE_SET = {};
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe("the render processes' compile cache", () => {
  it('is a folder made for this user alone', () => {
    const dir = join(scratch, 'made');

    expect(renderCompileCache(dir, NO_CACHE_SET)).toBe(dir);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(renderCompileCache(dir, NO_CACHE_SET)).toBe(dir); // and taken again as it is
  });

  it('is not used when others may write to it, or when it is not a folder of its own', () => {
    const open = join(scratch, 'open');
    mkdirSync(open);
    chmodSync(open, 0o777);
    const file = join(scratch, 'file');
    writeFileSync(file, '');
    const link = join(scratch, 'link');
    symlinkSync(join(scratch, 'made'), link);

    expect(renderCompileCache(open, NO_CACHE_SET)).toBeUndefined();
    expect(renderCompileCache(file, NO_CACHE_SET)).toBeUndefined();
    expect(renderCompileCache(link, NO_CACHE_SET)).toBeUndefined();
  });

  it('is the one NODE_COMPILE_CACHE names, where it is set', () => {
    const named = join(scratch, 'named');

    expect(renderCompileCache(join(scratch, 'unused'), { NODE_COMPILE_CACHE: named })).toBe(named);
  });
});
