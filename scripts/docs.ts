// Builds the docs site into dist/docs: the guides of docs/ as a VitePress site
// (docs/.vitepress/config.ts), with the pages made from the repository staged beside
// them (the changelog from contract/changelog.ts, the benchmark's latest report, the
// figures a guide quotes from a run, scripts/docFigures.ts), and under reference/ the API
// reference: reference/index.html, one HTML file, the whole reference of
// generated/openapi.json (paths and webhooks), that renders with no network at all, so
// it can be mailed, attached to a release or opened on a plane, with changelog.md and
// changelog.html, the contract's changes release by release, beside it.
//
// Neither the build nor the pages reach the network: VitePress bundles its theme and font
// and indexes the pages for its local search at build time (test/docs-site.test.ts loads
// every page with the network refused).
//
// `redocly build-docs` does most of it: --inlineBundle embeds Redoc instead of loading
// it from the Redocly CDN. Two things it leaves online, which this script closes and
// then checks, failing rather than writing a page that would phone out:
// - Redoc 3 loads its "API docs by Redocly" footer logo from cdn.redoc.ly when the page
//   starts; the URLs are swapped for inline SVGs.
// - Redoc 3 sends usage telemetry from the reader's browser unless its options say
//   `disableTelemetry`; the CLI only sets it when the CLI's own telemetry is off, so it
//   is passed explicitly.
import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, extname, join, relative, resolve } from 'node:path';
import { promisify } from 'node:util';
import { writeChangelog } from '../contract/changelog.ts';
import { fillFigures, readRunRecords } from './docFigures.ts';

const ROOT = resolve(import.meta.dirname, '..');
const BUNDLE = join(ROOT, 'generated', 'openapi.json');
const CONFIG = join(ROOT, 'redocly.yaml');
// Run the CLI's entry point with this Node (24) rather than through the .bin shim,
// whose `#!/usr/bin/env node` may find the system's older Node first.
const REDOCLY = join(ROOT, 'node_modules', '@redocly', 'cli', 'bin', 'cli.js');
export const SITE_OUT = join(ROOT, 'dist', 'docs');
export const DEFAULT_OUT = join(SITE_OUT, 'reference', 'index.html');
const GUIDES = join(ROOT, 'docs');
// Inside the repository, so the site's config finds vitepress in node_modules; under dist/, so git ignores it.
const STAGE = join(ROOT, 'dist', 'docs-src');

const run = promisify(execFile);

// The only URLs Redoc 3.0 fetches by itself once the bundle is inline (seen by
// loading the page with the network blocked). Each maps to a local stand-in.
const REMOTE_ASSETS: Record<string, string> = {
  'https://cdn.redoc.ly/redoc/logo-mini-full.svg': svgDataUri('Redocly', 56),
  'https://cdn.redoc.ly/redoc/logo-mini.svg': svgDataUri('R', 12),
};

export async function buildDocs(outFile: string = DEFAULT_OUT): Promise<string> {
  const target = resolve(outFile);
  const scratch = await mkdtemp(join(tmpdir(), 'docs-'));
  try {
    const built = join(scratch, 'index.html');
    await redoclyBuildDocs(built);
    const html = localiseAssets(await readFile(built, 'utf8'));
    const problems = offlineProblems(html);
    if (problems.length > 0) {
      throw new Error(`the page would not render offline:\n  - ${problems.join('\n  - ')}`);
    }
    await mkdir(dirname(target), { recursive: true });
    await writeFile(target, html);
    return target;
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

async function redoclyBuildDocs(outFile: string): Promise<void> {
  const args = [REDOCLY, 'build-docs', BUNDLE, '--config', CONFIG, '--inlineBundle', '--openapi.disableTelemetry=true', '-o', outFile];
  try {
    await run(process.execPath, args, {
      cwd: ROOT,
      env: { ...process.env, REDOCLY_TELEMETRY: 'off' },
      maxBuffer: 16 * 1024 * 1024,
      timeout: 120_000,
    });
  } catch (error) {
    const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
    throw new Error(`redocly build-docs failed: ${(error as Error).message}\n${stdout}${stderr}`.trim());
  }
}

function localiseAssets(html: string): string {
  let result = html;
  for (const [url, local] of Object.entries(REMOTE_ASSETS)) result = result.replaceAll(url, local);
  return result;
}

// What would make the page reach the network when opened: an external script,
// stylesheet, image or frame; a CSS url()/@import; one of the known runtime fetches;
// telemetry left on.
export function offlineProblems(html: string): string[] {
  const problems: string[] = [];
  const remote = String.raw`["']?\s*(?:https?:)?//`;
  const patterns: [string, RegExp][] = [
    ['element loading a remote resource', new RegExp(String.raw`<(?:script|link|img|iframe|source|audio|video)\b[^>]*\s(?:src|href)\s*=\s*${remote}[^\s"'>]*`, 'gi')],
    ['CSS url() to a remote resource', new RegExp(String.raw`url\(\s*${remote}[^)]*\)`, 'gi')],
    ['CSS @import of a remote stylesheet', new RegExp(String.raw`@import\s+(?:url\()?\s*${remote}[^;]*`, 'gi')],
  ];
  for (const [what, pattern] of patterns) {
    for (const match of html.matchAll(pattern)) problems.push(`${what}: ${match[0].slice(0, 160)}`);
  }
  for (const url of Object.keys(REMOTE_ASSETS)) {
    if (html.includes(url)) problems.push(`Redoc still fetches ${url} at view time`);
  }
  const options = /const __redoc_options = (\{.*?\});/.exec(html);
  if (!options) problems.push('Redoc options not found in the page (template changed?), cannot confirm telemetry is off');
  else if ((JSON.parse(options[1] as string) as { disableTelemetry?: unknown }).disableTelemetry !== true) {
    problems.push('Redoc telemetry is not disabled in the page options');
  }
  return problems;
}

// A small grey wordmark as a data: URI; percent-encoded throughout so it can replace a
// URL inside any JavaScript string literal of the bundle.
function svgDataUri(text: string, width: number): string {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="14" viewBox="0 0 ${width} 14"><text x="0" y="11" font-family="sans-serif" font-size="11" fill="#6b7280">${text}</text></svg>`;
  return `data:image/svg+xml,${encodeURIComponent(svg).replaceAll("'", '%27')}`;
}

export interface SiteOptions {
  /** Where docs/ is staged; inside the repository, so the site's config finds vitepress in node_modules. */
  stage?: string;
  /**
   * false: reference/index.html is a one-line page instead of Redoc's, for a test of the
   * guides alone (test/contract/docs.test.ts holds Redoc's page to its own rules).
   */
  reference?: boolean;
}

/**
 * The site: docs/ staged with the pages the repository makes, built by VitePress into
 * `outDir`, then the reference and the changelog's own files under reference/.
 * Returns the folder.
 */
export async function buildSite(outDir: string = SITE_OUT, options: SiteOptions = {}): Promise<string> {
  const target = resolve(outDir);
  const stage = options.stage ?? STAGE;
  await stageGuides(stage);
  // VitePress empties its outDir first, so the reference goes in after it.
  const { build } = await import('vitepress');
  await build(stage, { outDir: target });
  const reference = join(target, 'reference', 'index.html');
  if (options.reference === false) {
    await mkdir(dirname(reference), { recursive: true });
    await writeFile(reference, '<!doctype html><title>API reference</title><p>The API reference is built by npm run docs.</p>\n');
  } else {
    await buildDocs(reference);
  }
  await writeChangelog(dirname(reference));
  return target;
}

/**
 * docs/ copied to `stage`, with changelog.md written from the contract's releases, each
 * `<!-- include: path -->` line replaced by that file of the repository (the benchmark's
 * report, the runner's CI recipe), and the figures of runs filled from their records.
 */
export async function stageGuides(stage: string): Promise<void> {
  await rm(stage, { recursive: true, force: true });
  await cp(GUIDES, stage, { recursive: true, filter: (source) => !source.includes(`${join('.vitepress', 'cache')}`) });
  const scratch = await mkdtemp(join(tmpdir(), 'changelog-'));
  try {
    await writeChangelog(scratch);
    await writeFile(join(stage, 'changelog.md'), await readFile(join(scratch, 'changelog.md'), 'utf8'));
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
  // The report's chart is a file beside it: the page that includes the report gets it beside itself.
  await cp(join(ROOT, 'bench', 'read-throughput.svg'), join(stage, 'read-throughput.svg'));
  const records = readRunRecords();
  for (const name of await readdir(stage)) {
    if (!name.endsWith('.md')) continue;
    const file = join(stage, name);
    const text = await readFile(file, 'utf8');
    const expanded = await replaceAsync(text, /^<!-- include: (\S+) -->$/gm, async (path) => included(path, await readFile(join(ROOT, path), 'utf8')));
    await writeFile(file, fillFigures(expanded, records, `docs/${name}`));
  }
}

/**
 * An included report's text as text: a `<` outside code (but a comment's) is written `&lt;`, since the site
 * reads Markdown's inline HTML as Vue templates (the benchmark's "/proc/<pid>/status"
 * would be an unclosed element).
 */
export function escapeAngles(markdown: string): string {
  return markdown
    .split(/(^```[\s\S]*?^```$)/m)
    .map((part, i) => (i % 2 === 1 ? part : part.split(/(`+[^`]*?`+)/).map((piece, j) => (j % 2 === 1 ? piece : piece.replace(/<(?!!--)/g, '&lt;'))).join('')))
    .join('');
}

/**
 * What an include puts in the page: a Markdown file's text, its headings one level down
 * and its angle brackets as text; any other file as a code block of its kind.
 */
function included(path: string, text: string): string {
  if (path.endsWith('.md')) return escapeAngles(demoteHeadings(text));
  const fence = '`'.repeat(Math.max(3, ...[...text.matchAll(/`+/g)].map((m) => m[0].length + 1)));
  return `${fence}${extname(path).slice(1)}\n${text.endsWith('\n') ? text : `${text}\n`}${fence}`;
}

/** An included file's headings one level down: the page that includes it has its own title. */
export function demoteHeadings(markdown: string): string {
  return markdown
    .split(/(^```[\s\S]*?^```$)/m)
    .map((part, i) => (i % 2 === 1 ? part : part.replace(/^(#{1,5}) /gm, '#$1 ')))
    .join('');
}

async function replaceAsync(text: string, pattern: RegExp, replace: (group: string) => Promise<string>): Promise<string> {
  const parts: string[] = [];
  let last = 0;
  for (const match of text.matchAll(pattern)) {
    parts.push(text.slice(last, match.index), await replace(match[1] as string));
    last = (match.index ?? 0) + match[0].length;
  }
  return parts.join('') + text.slice(last);
}

if (import.meta.main) {
  if (process.argv.slice(2).some((arg) => arg === '--help' || arg === '-h')) {
    console.log(`Usage: npm run docs [-- <output folder>]   (default dist/docs)

Builds the docs site: the guides of docs/, the API reference in one file that renders
offline (reference/index.html) and the contract's changes release by release, with no
network at build or view time. It prints how to read the result.`);
    process.exit(0);
  }
  try {
    const out = await buildSite(process.argv[2] ?? SITE_OUT);
    const where = relative(process.cwd(), out) || '.';
    console.log(`Wrote ${where}: the guides (index.html), the API reference in one file rendering offline (reference/index.html) and the contract's changes release by release (changelog.html; reference/changelog.md and .html on their own).`);
    console.log(`To read it: npx vite preview --outDir ${where} (http://localhost:4173/), or any static file server on ${where}.`);
  } catch (error) {
    console.error(`docs: ${(error as Error).message}`);
    process.exitCode = 1;
  }
}
