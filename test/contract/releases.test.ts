// A release is compared as it is kept in openapi/releases/, never as git holds it, so the
// gate, `npm run contract:diff` and the changelog of `npm run docs` work in a shallow
// clone (what a CI checkout fetches) and in a source tarball, which has no .git at all.
// Held here: every recorded release has its kept bundle; that bundle is, byte for byte,
// what the release's commit holds, wherever the history has the commit; and in a copy of
// the contract where git answers nothing, the comparison and the changelog are made.
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUNDLE_FILE, RELEASED_BUNDLES_DIR, loadReleases, missingHistory, releasedBundle, releasedBundleFile } from '../../contract/releases.ts';
import { ROOT } from './support/openapi.ts';

const RELEASES = loadReleases(ROOT);

describe('the released bundles kept in openapi/releases/', () => {
  it('keep one bundle for each release recorded in openapi/releases.json, of its version, and nothing else', () => {
    expect(RELEASES.length).toBeGreaterThan(0);
    for (const release of RELEASES) expect(releasedBundle(ROOT, release).info).toMatchObject({ version: release.version });

    const kept = readdirSync(join(ROOT, RELEASED_BUNDLES_DIR)).filter((name) => name !== 'README.md');
    expect(kept.sort()).toEqual(RELEASES.map((release) => releasedBundleFile(release).slice(RELEASED_BUNDLES_DIR.length + 1)).sort());
  });

  it.for(RELEASES.map((release) => [release.version, release] as const))("hold release %s's generated/openapi.json byte for byte, as its commit has it", ([, release], context) => {
    const kept = readFileSync(join(ROOT, releasedBundleFile(release)), 'utf8');
    let committed: string;
    try {
      committed = execFileSync('git', ['-C', ROOT, 'show', `${release.commit}:${BUNDLE_FILE}`], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 64 * 1024 * 1024 });
    } catch (error) {
      // Only where the history cannot have the commit; in a whole history its absence is a
      // wrong commit in openapi/releases.json, and fails.
      const missing = missingHistory(ROOT);
      if (missing !== undefined) return context.skip(`no git history to compare the kept bundle with (${missing}); it is compared wherever the history is whole`);
      throw new Error(`release ${release.version}'s commit ${release.commit} has no ${BUNDLE_FILE} in this history: ${(error as Error).message}`);
    }

    expect(kept === committed, `${releasedBundleFile(release)} differs from ${BUNDLE_FILE} at ${release.commit}: make it again as ${RELEASED_BUNDLES_DIR}/README.md says`).toBe(true);
  });
});

describe('where git answers nothing (a copy of the contract with no .git, GIT_DIR pointing nowhere)', () => {
  const CLI = join(ROOT, 'scripts', 'contract-diff.ts');
  let copy: string;
  let env: NodeJS.ProcessEnv;

  beforeAll(() => {
    copy = mkdtempSync(join(tmpdir(), 'releases-no-git-'));
    for (const path of ['openapi', 'redocly.yaml', BUNDLE_FILE]) cpSync(join(ROOT, path), join(copy, path), { recursive: true });
    // Any git command run for the copy fails, as it does in a source tarball.
    env = { ...process.env, GIT_DIR: join(copy, 'no-such-git-dir'), GIT_CEILING_DIRECTORIES: copy, REDOCLY_TELEMETRY: 'off' };
  });

  afterAll(() => {
    if (copy) rmSync(copy, { recursive: true, force: true });
  });

  it('when npm run contract:diff is given no base, then it compares with the last release kept and finds no breaking change', () => {
    const last = RELEASES.at(-1)!;

    const run = spawnSync(process.execPath, [CLI, '--repo', copy], { encoding: 'utf8', env, timeout: 60_000 });

    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    expect(run.stdout).toContain(`Comparing release ${last.version} (${releasedBundleFile(last)}, from ${last.commit.slice(0, 12)}) with the working tree's openapi/, bundled now.`);
    expect(run.stdout).toContain('No breaking change');
  });

  it('when npm run contract:diff is asked for a git ref, then it exits 2 saying there is no git repository', () => {
    const run = spawnSync(process.execPath, [CLI, '--repo', copy, '--base', 'HEAD'], { encoding: 'utf8', env, timeout: 60_000 });

    expect(run.status).toBe(2);
    expect(run.stderr.trim()).toBe(`contract:diff: unknown git ref "HEAD": ${copy} is not a git repository`);
  });

  it("when the changelog is written, then it lists each release and what is unreleased, from the kept bundles", () => {
    const out = join(copy, 'docs');
    mkdirSync(out);
    const probe = join(copy, 'changelog-probe.ts');
    writeFileSync(probe, `import { writeChangelog } from ${JSON.stringify(join(ROOT, 'contract', 'changelog.ts'))};\nawait writeChangelog(${JSON.stringify(out)}, ${JSON.stringify(copy)});\n`);

    const run = spawnSync(process.execPath, [probe], { encoding: 'utf8', env, timeout: 60_000 });

    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    const markdown = readFileSync(join(out, 'changelog.md'), 'utf8');
    expect(markdown).toContain('## Unreleased');
    for (const release of RELEASES) expect(markdown).toContain(`## ${release.version} (${release.date})`);
  });
});
