// The layers of ARCHITECTURE.md, held by the code's own imports: a forbidden import or
// an import circle fails here, in CI, before anyone has to notice it in review.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ignoredByGit } from './support/workingTree.ts';

const ROOT = resolve(import.meta.dirname, '..');

interface SourceFile {
  /** Path from the repository root. */
  path: string;
  /** Repository paths of the files it imports, and the bare names of the packages it imports. */
  imports: string[];
}

function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts') && !e.name.endsWith('.d.ts'))
    .map((e) => relative(ROOT, join(e.parentPath, e.name)));
}

const IMPORT = /(?:^|\n)\s*(?:import|export)\s[^'";]*?from\s+'([^']+)'|(?:^|\n)\s*import\s+'([^']+)'|import\('([^']+)'\)/g;

function read(path: string): SourceFile {
  const text = readFileSync(join(ROOT, path), 'utf8');
  const imports = [...text.matchAll(IMPORT)].map((m) => {
    const spec = (m[1] ?? m[2] ?? m[3])!;
    return spec.startsWith('.') ? relative(ROOT, resolve(ROOT, dirname(path), spec)) : spec;
  });
  return { path, imports };
}

const files = ['server/src', 'conformance/src', 'client/src', 'msw/src', 'contract', 'scripts']
  .flatMap(sources)
  .filter((p) => !p.includes('/test/'))
  .map(read);

/** The files that put a service together: nothing below them may import them. */
const ASSEMBLY = ['server/src/app.ts', 'server/src/runtime.ts', 'server/src/main.ts', 'server/src/admin.ts', 'server/src/migrate.ts', 'server/src/config.ts'];

/**
 * The files of the server that the MSW package imports beyond the domain and the memory
 * store: the problem table and the request validator, which know no Koa, and the engine's
 * timeline, which states a video's length from its script.
 */
const MSW_MAY_IMPORT = ['server/src/http/problem.ts', 'server/src/http/requestValidator.ts', 'server/src/engine/timeline.ts'];

/** Every file under `folder` but those allowed. */
function serverFilesBut(folder: string, allowed: readonly string[]): string[] {
  return sources(folder).filter((p) => !allowed.includes(p));
}

/** What each part may not import: repository folders (with a slash), files or packages. */
const FORBIDDEN: { from: string; not: string[]; why: string }[] = [
  { from: 'server/src/domain/', not: [...ASSEMBLY, 'server/src/http/', 'server/src/storage/', 'server/src/workers/', 'server/src/engine/', 'server/src/metrics.ts', 'server/src/logger.ts', 'koa', '@koa/router', 'pg', 'ioredis', 'node:sqlite', 'pino'], why: 'the domain knows no transport, no adapter and no process' },
  { from: 'server/src/storage/', not: [...ASSEMBLY, 'server/src/http/', 'server/src/workers/', 'server/src/engine/', 'server/src/metrics.ts', 'koa'], why: 'an adapter depends on the domain alone' },
  { from: 'server/src/workers/', not: [...ASSEMBLY, 'server/src/http/', 'server/src/storage/', 'koa'], why: 'workers reach the store through the ports' },
  { from: 'server/src/http/', not: [...ASSEMBLY, 'server/src/storage/', 'server/src/workers/', 'pg', 'ioredis', 'node:sqlite'], why: 'routes reach the store through use cases' },
  { from: 'server/src/engine/', not: [...ASSEMBLY, 'server/src/http/', 'server/src/storage/', 'server/src/workers/'], why: 'the engine is an adapter of the domain' },
  { from: 'server/src/metrics.ts', not: ['server/src/'], why: 'the instruments are leaves: the parts use them, never the reverse' },
  { from: 'server/src/logger.ts', not: ['server/src/'], why: 'the instruments are leaves: the parts use them, never the reverse' },
  { from: 'conformance/', not: ['server/'], why: 'the runner sees an implementation over HTTP only' },
  { from: 'client/', not: ['server/', 'conformance/'], why: 'the client is for integrators and knows no implementation' },
  { from: 'contract/', not: ['server/', 'client/', 'conformance/'], why: 'the contract is the neutral ground everyone imports' },
  {
    from: 'msw/',
    not: [
      ...ASSEMBLY,
      ...serverFilesBut('server/src/http/', MSW_MAY_IMPORT),
      ...serverFilesBut('server/src/engine/', MSW_MAY_IMPORT),
      'server/src/workers/',
      'server/src/storage/embedded/',
      'server/src/storage/postgres-redis/',
      'server/src/metrics.ts',
      'server/src/logger.ts',
      'conformance/',
      'koa',
      '@koa/router',
      'pg',
      'ioredis',
      'node:sqlite',
      'pino',
    ],
    why: 'the mock runs the domain on the memory store, in a page: no Koa, no worker, no database driver',
  },
];

const matches = (target: string, rule: string) => (rule.includes('/') || rule.endsWith('.ts') ? target === rule || target.startsWith(rule) : target === rule || target.startsWith(`${rule}/`));

describe('the layers', () => {
  it.each(FORBIDDEN)('$from imports nothing of $not ($why)', ({ from, not }) => {
    const offending = files
      .filter((f) => f.path.startsWith(from))
      .flatMap((f) => f.imports.filter((target) => not.some((rule) => matches(target, rule))).map((target) => `${f.path} -> ${target}`));

    expect(offending).toEqual([]);
  });

  it('hands the logger to the parts: only the assembly imports logger.ts', () => {
    const importers = files.filter((f) => f.path.startsWith('server/src/') && f.imports.includes('server/src/logger.ts')).map((f) => f.path);

    expect(importers.length).toBeGreaterThan(0);
    expect(importers.filter((path) => !ASSEMBLY.includes(path))).toEqual([]);
  });

  it('reads enough of the tree to mean something', () => {
    expect(files.filter((f) => f.path.startsWith('server/src/domain/')).length).toBeGreaterThan(15);
    expect(files.find((f) => f.path === 'server/src/http/routes.ts')?.imports).toContain('server/src/domain/jobs.ts');
  });
});

describe('import circles', () => {
  it.each(['server/src/', 'conformance/src/'])('none in %s', (root) => {
    const inside = new Map(files.filter((f) => f.path.startsWith(root)).map((f) => [f.path, f.imports.filter((i) => i.startsWith(root))]));
    const circles: string[] = [];
    const state = new Map<string, 'open' | 'done'>();
    const stack: string[] = [];
    const visit = (file: string) => {
      state.set(file, 'open');
      stack.push(file);
      for (const next of inside.get(file) ?? []) {
        if (state.get(next) === 'open') circles.push([...stack.slice(stack.indexOf(next)), next].join(' -> '));
        else if (!state.has(next)) visit(next);
      }
      stack.pop();
      state.set(file, 'done');
    };
    for (const file of inside.keys()) if (!state.has(file)) visit(file);

    expect(circles).toEqual([]);
  });
});

describe('the name generated/', () => {
  // generated/ means "made by npm run generate, never edited": a hand-written folder under
  // that name would invite a reader to regenerate it, or never to review it.
  it('is taken by the top-level generated/ alone', () => {
    // What git ignores is made by tools (dist/ holds the packages' copies of generated/).
    const ignored = ignoredByGit(ROOT);
    const found: string[] = [];
    const walk = (dir: string) => {
      for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
        if (!entry.isDirectory() || ignored(entry.name, true)) continue;
        const path = dir ? `${dir}/${entry.name}` : entry.name;
        if (entry.name === 'generated' && path !== 'generated') found.push(path);
        walk(path);
      }
    };
    walk('');

    expect(found).toEqual([]);
  });
});

describe('the reading of database rows', () => {
  // server/src/storage/rows.ts reads every row into a domain record for both stores: a
  // store's own copy of a reader drifts from the other's (one forgets PostgreSQL's numbers
  // as text, the other SQLite's JSON as text) where no test of one store sees it.
  it('is written once, in server/src/storage/rows.ts: no store defines its own row readers', () => {
    const READER = /(?:const|function)\s+(num|\w*OrNull|json\w*|to[A-Z]\w*|rowTo\w*)\s*[=(<]/g;
    const copies = files
      .filter((f) => f.path.startsWith('server/src/storage/') && f.path !== 'server/src/storage/rows.ts')
      .flatMap((f) => [...readFileSync(join(ROOT, f.path), 'utf8').matchAll(READER)].map((m) => `${f.path}: ${m[1]}`));

    expect(copies).toEqual([]);
    expect(files.filter((f) => f.path.startsWith('server/src/storage/') && f.imports.includes('server/src/storage/rows.ts')).length).toBeGreaterThanOrEqual(6);
  });
});

describe('the bulk loaders', () => {
  // They serve the benchmark and the tests that need a large store, outside the domain's
  // ports: a new store need not write one, and the service itself never writes in bulk.
  it('are reached by no part of the service but runtime.ts, which opens them for the benchmark and the tests', () => {
    const loaders = (target: string) => target === 'server/src/storage/bulk.ts' || /^server\/src\/storage\/[^/]+\/bulk\.ts$/.test(target);
    const users = files
      .filter((f) => f.path.startsWith('server/src/') && !f.path.startsWith('server/src/storage/') && f.imports.some(loaders))
      .map((f) => f.path);

    expect(users).toEqual(['server/src/runtime.ts']);
    expect(readFileSync(join(ROOT, 'server/src/domain/ports.ts'), 'utf8')).not.toMatch(/bulk/i);
  });
});
