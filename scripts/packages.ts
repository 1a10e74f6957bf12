// `npm run packages`: the typed client, the conformance runner and the MSW mock as npm packages, for
// teams that use them outside a clone. The TypeScript is compiled to JavaScript with
// declarations (tsconfig.packages.json), so they run on any Node the `engines` name,
// without type stripping; each package carries the neutral modules it imports
// (contract/, generated/) at the same relative paths, then `npm pack` makes the tarballs.
//
//   node scripts/packages.ts [--out dir]    -> <dir>/avatar-service-client-1.0.0.tgz, ...
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { answerHelp, parseOrExit } from './help.ts';
import { bundleForBrowser } from './msw-browser.ts';

const ROOT = resolve(import.meta.dirname, '..');
const BIN = join(ROOT, 'node_modules', '.bin');
const VERSION = '1.0.0';
/** The Node the packages are tested on and after (the system Node 20 of CI machines, and 24). */
const ENGINES = { node: '>=20.19' };

const root = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { dependencies: Record<string, string>; devDependencies: Record<string, string> };
const range = (name: string) => root.dependencies[name] ?? root.devDependencies[name]!;

interface PackageSpec {
  dir: string;
  manifest: Record<string, unknown>;
  /** Folders of the compiled tree the package carries. */
  trees: string[];
  /** Files copied as they are (data read at run time). */
  files: [from: string, to: string][];
  /** Its own compile (default tsconfig.packages.json) and Node range (default ENGINES), when they differ. */
  tsconfig?: string;
  engines?: Record<string, string>;
  /** ES modules for the browser made by scripts/msw-browser.ts: entry, file in the package, packages left out. */
  bundles?: { entry: string; out: string; external: string[] }[];
  readme: string;
}

const PACKAGES: PackageSpec[] = [
  {
    dir: 'client',
    manifest: {
      name: '@avatar-service/client',
      description: 'Typed client, webhook verifier and idempotent receiver for the Avatar Service API.',
      type: 'module',
      exports: {
        '.': { types: './client/src/index.d.ts', default: './client/src/index.js' },
        // Apart from the client: a project that type-checks the client alone needs no Koa types.
        './receiver': { types: './client/src/receiver.d.ts', default: './client/src/receiver.js' },
      },
      types: './client/src/index.d.ts',
      dependencies: { 'openapi-fetch': range('openapi-fetch'), 'structured-headers': range('structured-headers') },
      // The receiver is Koa middleware: its types name Koa's, for those who use it.
      peerDependencies: { '@types/koa': range('@types/koa') },
      peerDependenciesMeta: { '@types/koa': { optional: true } },
    },
    trees: ['client', 'contract', 'generated'],
    files: [],
    readme: 'client/README.md',
  },
  {
    dir: 'conformance',
    manifest: {
      name: '@avatar-service/conformance',
      description: 'Conformance runner for implementations of the Avatar Service API: drives a base URL over HTTP and reports clause by clause.',
      type: 'module',
      bin: { 'avatar-conformance': './conformance/src/cli.js' },
      exports: { '.': { types: './conformance/src/run.d.ts', default: './conformance/src/run.js' } },
      types: './conformance/src/run.d.ts',
      dependencies: Object.fromEntries(['ajv', 'ajv-formats', 'fast-check', 'ipaddr.js', 'jsonpointer', 'openapi-fetch', 'structured-headers', 'yaml'].map((name) => [name, range(name)])),
    },
    trees: ['client', 'conformance', 'contract', 'generated'],
    files: [
      ['generated/openapi.json', 'generated/openapi.json'],
      ['conformance/src/implementation/profile.schema.json', 'conformance/src/implementation/profile.schema.json'],
    ],
    readme: 'conformance/README.md',
  },
  {
    dir: 'msw',
    manifest: {
      name: '@avatar-service/msw',
      description: "Mock Service Worker handlers for the Avatar Service API that run the service's own rules in memory: for unit tests, Storybook and the browser.",
      type: 'module',
      exports: {
        // In Node (msw/node, Vitest, Jest): the compiled tree, on Node's own crypto.
        '.': { types: './msw/src/index.d.ts', browser: './browser.js', default: './msw/src/index.js' },
        // In a page (msw/browser): one module with browser-safe crypto and the contract inside.
        './browser': { types: './msw/src/index.d.ts', default: './browser.js' },
      },
      types: './msw/src/index.d.ts',
      dependencies: Object.fromEntries(['ajv', 'ajv-formats', 'ipaddr.js', 'lru-cache', 'safe-stable-stringify', 'structured-headers'].map((name) => [name, range(name)])),
      // The page's or the test's own msw: one copy of it, whose worker file the app serves.
      peerDependencies: { msw: range('msw') },
    },
    // The domain it carries uses ES2024 (Map.groupBy), which Node 20 lacks.
    tsconfig: 'tsconfig.packages-msw.json',
    engines: { node: '>=22' },
    trees: ['msw', 'server', 'contract', 'generated'],
    files: [['generated/openapi.json', 'generated/openapi.json']],
    bundles: [{ entry: 'msw/src/index.ts', out: 'browser.js', external: ['msw'] }],
    readme: 'msw/README.md',
  },
];

/** Builds, stages and packs every package into `out`; returns the tarballs' paths. */
export async function buildPackages(out: string): Promise<string[]> {
  const build = join(out, 'build');
  rmSync(out, { recursive: true, force: true });
  for (const tsconfig of new Set(PACKAGES.map((spec) => spec.tsconfig ?? 'tsconfig.packages.json'))) {
    execFileSync(join(BIN, 'tsc'), ['-p', join(ROOT, tsconfig), '--outDir', build], { cwd: ROOT, stdio: 'inherit' });
  }
  const tarballs: string[] = [];
  for (const spec of PACKAGES) {
    const stage = join(out, 'stage', spec.dir);
    for (const tree of spec.trees) cpSync(join(build, tree), join(stage, tree), { recursive: true });
    for (const [from, to] of spec.files) {
      mkdirSync(dirname(join(stage, to)), { recursive: true });
      cpSync(join(ROOT, from), join(stage, to));
    }
    for (const bundle of spec.bundles ?? []) await bundleForBrowser(join(ROOT, bundle.entry), join(stage, bundle.out), { external: bundle.external });
    cpSync(join(ROOT, spec.readme), join(stage, 'README.md'));
    writeFileSync(join(stage, 'package.json'), `${JSON.stringify({ ...spec.manifest, version: VERSION, license: 'MIT', engines: spec.engines ?? ENGINES }, null, 2)}\n`);
    const name = execFileSync('npm', ['pack', '--silent', '--pack-destination', out], { cwd: stage, encoding: 'utf8' }).trim().split('\n').at(-1)!;
    tarballs.push(join(out, name));
  }
  return tarballs;
}

/** The Node range each package states in `engines`, for --help and the docs that quote it. */
export function nodeRanges(): { name: string; node: string }[] {
  return PACKAGES.map((spec) => ({ name: spec.manifest.name as string, node: (spec.engines ?? ENGINES).node! }));
}

if (import.meta.main) {
  answerHelp(`Usage: npm run packages [-- --out <dir>]

Builds the typed client, the conformance runner and the MSW mock as npm packages: compiles
them to JavaScript with declarations, stages each with the modules it carries, packs one
tarball each into <dir> (default dist/packages) and prints their paths. Install one with
npm install <tarball>.

${nodeRanges().map(({ name, node }) => `  ${name.padEnd(28)} Node ${node}`).join('\n')}`);
  const { values } = parseOrExit('packages', () => parseArgs({ options: { out: { type: 'string', default: join(ROOT, 'dist', 'packages') } } }));
  for (const tarball of await buildPackages(resolve(values.out!))) console.log(tarball);
}
