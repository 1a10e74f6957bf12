// The folder where render processes keep what Node compiles for them: made private to the
// user running the server, and refused when others could write code into it.
import { chmodSync, mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { renderCompileCache } from '../../src/engine/videos.ts';

const scratch = mkdtempSync(join(tmpdir(), 'compile-cache-test-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe("the render processes' compile cache", () => {
  it('is a folder made for this user alone', () => {
    const dir = join(scratch, 'made');

    expect(renderCompileCache(dir)).toBe(dir);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(renderCompileCache(dir)).toBe(dir); // and taken again as it is
  });

  it('is not used when others may write to it, or when it is not a folder of its own', () => {
    const open = join(scratch, 'open');
    mkdirSync(open);
    chmodSync(open, 0o777);
    const file = join(scratch, 'file');
    writeFileSync(file, '');
    const link = join(scratch, 'link');
    symlinkSync(join(scratch, 'made'), link);

    expect(renderCompileCache(open)).toBeUndefined();
    expect(renderCompileCache(file)).toBeUndefined();
    expect(renderCompileCache(link)).toBeUndefined();
  });
});
