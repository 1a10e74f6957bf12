// The breaking-change gate (ND-COMPAT: within /v1 only additive changes). In CI: the
// working bundle breaks nothing of the last release recorded in openapi/releases.json,
// read from its bundle kept in openapi/releases/. And `npm run contract:diff`, run as a
// process against a throwaway git repository, answers with the exit status a CI step or
// a reviewer acts on.
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { compareDocuments, markAccepted } from '../../contract/compatibility.ts';
import { loadAcceptedBreaks, loadReleases, releasedBundle, workingBundle } from '../../contract/releases.ts';
import { ROOT } from './support/openapi.ts';

const CLI = join(ROOT, 'scripts', 'contract-diff.ts');
const FIXTURE = readFileSync(join(ROOT, 'contract', 'test', 'fixtures', 'bundle.json'), 'utf8');
// Git in the throwaway repository reads no configuration of the machine's.
const GIT_ENV = { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1' };

type Node = { [key: string]: any };

describe('the working bundle against the last release', () => {
  it('has no breaking change', () => {
    const last = loadReleases(ROOT).at(-1);
    expect(last, 'openapi/releases.json records no release to hold the contract to').toBeDefined();

    const changes = markAccepted(compareDocuments(releasedBundle(ROOT, last!), workingBundle(ROOT)), loadAcceptedBreaks(ROOT));
    const breaking = changes.filter((change) => change.kind === 'breaking' && change.accepted === undefined);

    expect(breaking, `breaking changes against release ${last!.version}: make them additive or ship them as /v2`).toEqual([]);
  });

  it('accepts no break in openapi/accepted-breaks.json that the comparison does not find, so a stale entry cannot hide a later change', () => {
    const last = loadReleases(ROOT).at(-1)!;
    const found = compareDocuments(releasedBundle(ROOT, last), workingBundle(ROOT)).filter((change) => change.kind === 'breaking');

    const stale = loadAcceptedBreaks(ROOT).flatMap((a) => a.where.filter((where) => !found.some((c) => c.rule === a.rule && c.where === where)).map((where) => `${where} — ${a.rule}`));

    expect(stale).toEqual([]);
  });
});

describe('npm run contract:diff', () => {
  let repo: string;
  let first: string;
  let renamed: string;
  let added: string;

  beforeAll(() => {
    repo = mkdtempSync(join(tmpdir(), 'contract-diff-'));
    git('init', '-q');
    writeFileSync(join(repo, 'README.md'), 'No contract yet.\n');
    git('add', '-A');
    git('commit', '-q', '-m', 'Before the contract');
    first = commitBundle('The contract', () => {});
    renamed = commitBundle('A response member renamed', (doc) => {
      const avatar = doc.components.schemas.Avatar;
      avatar.properties.display_name = avatar.properties.name;
      delete avatar.properties.name;
      avatar.required = ['id', 'display_name', 'status'];
    });
    added = commitBundle('An optional response member added', (doc) => {
      doc.components.schemas.Avatar.properties.preview_url = { type: 'string' };
    });
  });

  afterAll(() => rmSync(repo, { recursive: true, force: true }));

  it('when a response member is renamed, then it exits 1 and names the member', () => {
    const run = cli('--base', first, '--head', renamed);

    expect(run.status).toBe(1);
    expect(run.stdout).toContain('GET /v1/avatars/{id} 200 response: name — response member removed');
    expect(run.stdout).toContain('GET /v1/avatars/{id} 200 response: display_name — response member added');
  });

  it('when an optional response member is added, then it exits 0', () => {
    const run = cli('--base', first, '--head', added);

    expect(run.status).toBe(0);
    expect(run.stdout).toContain('GET /v1/avatars/{id} 200 response: preview_url — response member added');
    expect(run.stdout).toContain('No breaking change');
  });

  it('when no --head is given, then the working tree is compared', () => {
    const run = cli('--base', first);

    expect(run.status).toBe(0);
    expect(run.stdout).toContain('with the working tree');
  });

  it('when no --base is given, then the last release in openapi/releases.json is the base, read from its kept bundle', () => {
    const run = withRelease(renamed, true, () => cli('--head', added));

    expect(run.status).toBe(1);
    expect(run.stdout).toContain(`Comparing release 1.0.0 (openapi/releases/1.0.0.json, from ${renamed.slice(0, 12)})`);
    expect(run.stdout).toContain('display_name — response member removed');
  });

  it('when --base names a recorded release, then its kept bundle is the base', () => {
    const run = withRelease(renamed, true, () => cli('--base', '1.0.0', '--head', added));

    expect(run.status).toBe(1);
    expect(run.stdout).toContain('Comparing release 1.0.0');
  });

  it('when the last release has no kept bundle, then it exits 2 saying how to make it, and reads no git in its stead', () => {
    const run = withRelease(renamed, false, () => cli('--head', added));

    expect(run.status).toBe(2);
    expect(run.stderr.trim()).toBe(`contract:diff: release 1.0.0 has no bundle kept in openapi/releases/1.0.0.json: make it from commit ${renamed} as openapi/releases/README.md says`);
  });

  it('when a breaking change is recorded in openapi/accepted-breaks.json, then it is printed as accepted with its reason and exits 0', () => {
    const removed = { rule: 'response member removed', where: ['GET /v1/avatars/{id} 200 response: name'], date: '2026-11-26', reason: 'No client reads it.' };

    const run = withAccepted([removed], () => cli('--base', first, '--head', renamed));

    expect(run.status).toBe(0);
    expect(run.stdout).toContain('Breaking, accepted in openapi/accepted-breaks.json (1):\n  GET /v1/avatars/{id} 200 response: name — response member removed\n    accepted: No client reads it.\n');
    expect(run.stdout).toContain('No breaking change but the 1 accepted in openapi/accepted-breaks.json');
  });

  it('when the record names another place or rule, then the break still fails the comparison', () => {
    const elsewhere = { rule: 'response member removed', where: ['GET /v1/avatar-videos/{id} 200 response: name'], date: '2026-11-26', reason: 'Another member.' };
    const otherRule = { rule: 'response member added', where: ['GET /v1/avatars/{id} 200 response: name'], date: '2026-11-26', reason: 'Another rule.' };

    const run = withAccepted([elsewhere, otherRule], () => cli('--base', first, '--head', renamed));

    expect(run.status).toBe(1);
    expect(run.stdout).not.toContain('accepted in');
  });

  it('when --json is given, then the changes are printed as JSON', () => {
    const run = cli('--base', first, '--head', renamed, '--json');

    expect(run.status).toBe(1);
    expect(JSON.parse(run.stdout).changes).toContainEqual({ kind: 'breaking', where: 'GET /v1/avatars/{id} 200 response: name', rule: 'response member removed' });
  });

  it.each([
    ['the base ref is unknown', ['--base', 'no-such-ref'], 'unknown git ref "no-such-ref"'],
    ['the base has no bundle', ['--base', 'HEAD~3'], 'has no generated/openapi.json'],
    ['an option is unknown', ['--bogus'], "Unknown option '--bogus'"],
  ])('when %s, then it exits 2 with one line and no stack', (_when, args, message) => {
    const run = cli(...args);

    expect(run.status).toBe(2);
    expect(run.stderr).toContain(message);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
  });

  it('when asked for --help, then it states the release policy', () => {
    const run = cli('--help');

    expect(run.status).toBe(0);
    expect(run.stdout).toContain('openapi/releases.json');
  });

  /**
   * Runs `act` with release 1.0.0 recorded in the throwaway repository at `commit`, and,
   * when `kept`, its bundle kept as openapi/releases/README.md says.
   */
  function withRelease<T>(commit: string, kept: boolean, act: () => T): T {
    mkdirSync(join(repo, 'openapi', 'releases'), { recursive: true });
    writeFileSync(join(repo, 'openapi', 'releases.json'), JSON.stringify([{ version: '1.0.0', commit, date: '2026-11-25', notes: 'First release of /v1.' }]));
    if (kept) writeFileSync(join(repo, 'openapi', 'releases', '1.0.0.json'), git('show', `${commit}:generated/openapi.json`));
    try {
      return act();
    } finally {
      rmSync(join(repo, 'openapi'), { recursive: true, force: true });
    }
  }

  /** Runs `act` with openapi/accepted-breaks.json in the throwaway repository holding `accepted`. */
  function withAccepted<T>(accepted: unknown[], act: () => T): T {
    mkdirSync(join(repo, 'openapi'), { recursive: true });
    writeFileSync(join(repo, 'openapi', 'accepted-breaks.json'), JSON.stringify(accepted));
    try {
      return act();
    } finally {
      rmSync(join(repo, 'openapi'), { recursive: true, force: true });
    }
  }

  function git(...args: string[]): string {
    return execFileSync('git', ['-C', repo, '-c', 'user.name=Test', '-c', 'user.email=test@example.invalid', '-c', 'commit.gpgsign=false', ...args], { encoding: 'utf8', env: GIT_ENV }).trim();
  }

  /** Commits the fixture bundle as `change` leaves it; returns the commit. */
  function commitBundle(message: string, change: (doc: Node) => void): string {
    const doc = JSON.parse(FIXTURE) as Node;
    change(doc);
    mkdirSync(join(repo, 'generated'), { recursive: true });
    writeFileSync(join(repo, 'generated', 'openapi.json'), JSON.stringify(doc, null, 2));
    git('add', '-A');
    git('commit', '-q', '-m', message);
    return git('rev-parse', 'HEAD');
  }

  function cli(...args: string[]) {
    return spawnSync(process.execPath, [CLI, '--repo', repo, ...args], { encoding: 'utf8', env: GIT_ENV, timeout: 30_000 });
  }
});

describe('npm run contract:diff in a working tree whose openapi/ was edited without npm run generate', () => {
  let repo: string;

  beforeAll(() => {
    // A scratch copy of this repository's contract, its source and its bundle committed together.
    repo = mkdtempSync(join(tmpdir(), 'contract-diff-source-'));
    for (const path of ['openapi', 'redocly.yaml', 'generated/openapi.json']) cpSync(join(ROOT, path), join(repo, path), { recursive: true });
    git('init', '-q');
    git('add', '-A');
    git('commit', '-q', '-m', 'The contract');
  });

  afterAll(() => rmSync(repo, { recursive: true, force: true }));

  it('when openapi/ renames a response member and generated/ still has the old name, then the rename is reported as a break and it exits 1', () => {
    const file = join(repo, 'openapi', 'components', 'schemas', 'Avatar.yaml');
    const avatar = parse(readFileSync(file, 'utf8')) as Node;
    avatar.properties.display_name = avatar.properties.name;
    delete avatar.properties.name;
    avatar.required = avatar.required.map((member: string) => (member === 'name' ? 'display_name' : member));
    writeFileSync(file, stringify(avatar));

    const run = cli('--base', 'HEAD');

    expect(run.stderr).toBe('');
    expect(run.status).toBe(1);
    expect(run.stdout).toContain("with the working tree's openapi/, bundled now");
    expect(run.stdout).toContain('GET /v1/avatars/{id} 200 response: name — response member removed');
    expect(run.stdout).toContain('GET /v1/avatars/{id} 200 response: display_name — response member added');
  });

  it('when openapi/ does not bundle, then it exits 2 with Redocly\'s complaint in one line and no verdict', () => {
    const root = join(repo, 'openapi', 'openapi.yaml');
    const before = readFileSync(root, 'utf8');
    writeFileSync(root, `${before}paths: [\n`);
    try {
      // FORCE_COLOR set, as test:repeat and many CI runners set it: the line stays plain.
      const run = cliWith({ FORCE_COLOR: '0' }, '--base', 'HEAD');

      expect(run.status).toBe(2);
      expect(run.stdout).toBe('');
      expect(run.stderr.trim().split('\n')).toHaveLength(1);
      expect(run.stderr).toMatch(/^contract:diff: cannot bundle .*openapi: Failed to parse API description/);
    } finally {
      writeFileSync(root, before);
    }
  });

  function git(...args: string[]): string {
    return execFileSync('git', ['-C', repo, '-c', 'user.name=Test', '-c', 'user.email=test@example.invalid', '-c', 'commit.gpgsign=false', ...args], { encoding: 'utf8', env: GIT_ENV }).trim();
  }

  function cli(...args: string[]) {
    return cliWith({}, ...args);
  }

  function cliWith(env: Record<string, string>, ...args: string[]) {
    return spawnSync(process.execPath, [CLI, '--repo', repo, ...args], { encoding: 'utf8', env: { ...GIT_ENV, ...env }, timeout: 60_000 });
  }
});
