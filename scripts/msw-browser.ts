// The MSW package for a page: one ES module bundled by esbuild, with the few Node
// modules the domain imports replaced by browser-safe ones (msw/src/browser/): SHA-256
// and HMAC from @noble/hashes, random bytes from Web Crypto, Buffer from the buffer
// package, and the contract's bundle imported rather than read from disk. The server
// never sees these: it runs on Node's own modules.
//
//   node scripts/msw-browser.ts <entry.ts> <out.js> [--external msw]
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { build, type BuildOptions } from 'esbuild';

const ROOT = resolve(import.meta.dirname, '..');
const SHIMS = resolve(ROOT, 'msw/src/browser');

export interface BrowserBundleOptions {
  /** Packages left to the page's own bundler or import map (e.g. `msw`, so the page and the package share one). */
  external?: string[];
  minify?: boolean;
}

export async function bundleForBrowser(entry: string, outfile: string, options: BrowserBundleOptions = {}): Promise<void> {
  const config: BuildOptions = {
    entryPoints: [entry],
    outfile,
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    minify: options.minify ?? false,
    sourcemap: false,
    external: options.external ?? [],
    alias: { 'node:crypto': resolve(SHIMS, 'crypto.ts'), 'node:fs': resolve(SHIMS, 'fs.ts') },
    inject: [resolve(SHIMS, 'buffer.ts')],
    logLevel: 'error',
  };
  await build(config);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { positionals, values } = parseArgs({ allowPositionals: true, options: { external: { type: 'string', multiple: true } } });
  const [entry, outfile] = positionals;
  if (!entry || !outfile) {
    console.error('usage: node scripts/msw-browser.ts <entry.ts> <out.js> [--external pkg]');
    process.exit(2);
  }
  await bundleForBrowser(resolve(entry), resolve(outfile), { external: values.external });
}
