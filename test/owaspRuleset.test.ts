// The bundled contract linted with the OWASP API Security ruleset (Spectral's), as
// .spectral.yaml configures it: every finding is fixed in openapi/ or listed there with
// why it is no flaw, so a new one fails here. Spectral's CLI, as a reviewer would run it:
// one process per lint, about two seconds.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '..');
const SPECTRAL = join(ROOT, 'node_modules', '.bin', 'spectral');
const RULESET = join(ROOT, '.spectral.yaml');
const BUNDLE = join(ROOT, 'generated', 'openapi.json');

interface Finding {
  code: string;
  path: (string | number)[];
  message: string;
}

/** Spectral's findings on `file`; it exits 1 when it has any, which is not a failure to run. */
async function lint(file: string): Promise<Finding[]> {
  const run = promisify(execFile)(SPECTRAL, ['lint', file, '--ruleset', RULESET, '--format', 'json', '--quiet'], { cwd: ROOT, maxBuffer: 64 * 1024 * 1024 });
  const stdout = await run.then(
    (result) => result.stdout,
    (error: { code?: number; stdout?: string; stderr?: string }) => {
      if (error.code === 1 && error.stdout) return error.stdout;
      throw new Error(`spectral failed to run (exit ${String(error.code)}): ${error.stderr ?? ''}`);
    },
  );
  return stdout.trim() === '' ? [] : (JSON.parse(stdout) as Finding[]);
}

const where = (finding: Finding) => `${finding.code} at ${finding.path.join('.')}: ${finding.message}`;

describe('the OWASP API ruleset on the bundled contract', () => {
  const dir = mkdtempSync(join(tmpdir(), 'owasp-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  // The contract's AvatarId without its pattern, alone in a document: a small one, as the
  // whole bundle takes Spectral seconds. Both lints at once, each a process of its own.
  const withoutIdPattern = join(dir, 'openapi.json');
  const bundle = JSON.parse(readFileSync(BUNDLE, 'utf8')) as { openapi: string; info: unknown; components: { schemas: Record<string, Record<string, unknown>> } };
  const { pattern: _pattern, ...avatarId } = bundle.components.schemas.AvatarId!;
  writeFileSync(withoutIdPattern, JSON.stringify({ openapi: bundle.openapi, info: bundle.info, paths: {}, components: { schemas: { AvatarId: avatarId } } }));
  const findings = Promise.all([lint(BUNDLE), lint(withoutIdPattern)]);

  it('finds nothing that .spectral.yaml does not list with its reason', async () => {
    const [contract] = await findings;

    expect(contract.map(where)).toEqual([]);
  });

  it('when an ID loses its pattern, then the ruleset finds it', async () => {
    const [, broken] = await findings;

    expect(broken.map(where)).toContain('owasp:api4:2023-string-restricted at components.schemas.AvatarId: Schema of type string should specify a format, pattern, enum, or const.');
  });
});
