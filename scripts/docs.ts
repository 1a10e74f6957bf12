// Builds dist/docs/index.html: one HTML file, the whole reference of
// generated/openapi.json (paths and webhooks), that renders with no network at all, so
// it can be mailed, attached to a release or opened on a plane. Beside it go
// changelog.md and changelog.html, the contract's changes release by release
// (contract/changelog.ts).
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
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { promisify } from 'node:util';
import { writeChangelog } from '../contract/changelog.ts';

const ROOT = resolve(import.meta.dirname, '..');
const BUNDLE = join(ROOT, 'generated', 'openapi.json');
const CONFIG = join(ROOT, 'redocly.yaml');
// Run the CLI's entry point with this Node (24) rather than through the .bin shim,
// whose `#!/usr/bin/env node` may find the system's older Node first.
const REDOCLY = join(ROOT, 'node_modules', '@redocly', 'cli', 'bin', 'cli.js');
export const DEFAULT_OUT = join(ROOT, 'dist', 'docs', 'index.html');

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

if (import.meta.main) {
  try {
    const out = await buildDocs(process.argv[2] ?? DEFAULT_OUT);
    console.log(`Wrote ${relative(process.cwd(), out)}: the API reference in one file, rendering offline.`);
    const changelog = await writeChangelog(dirname(out));
    console.log(`Wrote ${changelog.map((file) => relative(process.cwd(), file)).join(' and ')}: the contract's changes, release by release.`);
  } catch (error) {
    console.error(`docs: ${(error as Error).message}`);
    process.exitCode = 1;
  }
}
