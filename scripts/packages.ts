// `npm run packages`: the typed client and the conformance runner as npm packages, for
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
      dependencies: Object.fromEntries(['ajv', 'ajv-formats', 'fast-check', 'jsonpointer', 'openapi-fetch', 'structured-headers', 'yaml'].map((name) => [name, range(name)])),
    },
    trees: ['client', 'conformance', 'contract', 'generated'],
    files: [
      ['generated/openapi.json', 'generated/openapi.json'],
      ['conformance/src/implementation/profile.schema.json', 'conformance/src/implementation/profile.schema.json'],
    ],
    readme: 'conformance/README.md',
  },
];

/** Builds, stages and packs every package into `out`; returns the tarballs' paths. */
export function buildPackages(out: string): string[] {
  const build = join(out, 'build');
  rmSync(out, { recursive: true, force: true });
  execFileSync(join(BIN, 'tsc'), ['-p', join(ROOT, 'tsconfig.packages.json'), '--outDir', build], { cwd: ROOT, stdio: 'inherit' });
  return PACKAGES.map((spec) => {
    const stage = join(out, 'stage', spec.dir);
    for (const tree of spec.trees) cpSync(join(build, tree), join(stage, tree), { recursive: true });
    for (const [from, to] of spec.files) {
      mkdirSync(dirname(join(stage, to)), { recursive: true });
      cpSync(join(ROOT, from), join(stage, to));
    }
    cpSync(join(ROOT, spec.readme), join(stage, 'README.md'));
    writeFileSync(join(stage, 'package.json'), `${JSON.stringify({ ...spec.manifest, version: VERSION, license: 'MIT', engines: ENGINES }, null, 2)}\n`);
    const name = execFileSync('npm', ['pack', '--silent', '--pack-destination', out], { cwd: stage, encoding: 'utf8' }).trim().split('\n').at(-1)!;
    return join(out, name);
  });
}

if (import.meta.main) {
  const { values } = parseArgs({ options: { out: { type: 'string', default: join(ROOT, 'dist', 'packages') } } });
  for (const tarball of buildPackages(resolve(values.out!))) console.log(tarball);
}
