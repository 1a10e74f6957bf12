// The docs site as a reader meets it: built once by scripts/docs.ts (the guides, the
// changelog, a stand-in for the Redoc reference, which test/contract/docs.test.ts judges)
// in a process without a network, served by plain files on 127.0.0.1 and loaded page by page in headless Chromium with
// every request that would leave the machine refused. Every page loads without one, every
// link inside the site leads to a page and a heading that exist, no code block is wider
// than a phone's screen, and search finds a page offline.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { extname, join, resolve } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { figureDocs, fillFigures, readRunRecords } from '../scripts/docFigures.ts';

const ROOT = resolve(import.meta.dirname, '..');
const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-quic', '--disable-dev-shm-usage', '--no-first-run', '--disable-component-update', '--disable-sync'];
const TYPES: Record<string, string> = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.css': 'text/css', '.json': 'application/json', '.svg': 'image/svg+xml', '.png': 'image/png', '.woff2': 'font/woff2', '.md': 'text/markdown; charset=utf-8' };
// A phone's width: the narrowest screen a code block must fit in (it scrolls inside itself).
const PHONE = { width: 390, height: 844 };

let out: string;
let stage: string;
let server: Server;
let origin: string;
let browser: Browser;
/** Whether the build ran with no network at all (unshare --net). */
let builtOffline = false;
/** Requests a page made to anything but the site's own server. */
const offMachine: string[] = [];
const pageErrors: string[] = [];

function fileOf(pathname: string): string {
  const path = decodeURIComponent(pathname);
  const file = join(out, path.endsWith('/') ? `${path}index.html` : path);
  return extname(file) ? file : `${file}.html`;
}

async function newPage(): Promise<Page> {
  const page = await browser.newPage({ viewport: PHONE });
  await page.route('**/*', (route) => {
    const url = route.request().url();
    if (url.startsWith(`${origin}/`) || url.startsWith('data:')) return route.continue();
    offMachine.push(url);
    return route.abort('internetdisconnected');
  });
  page.on('pageerror', (error) => pageErrors.push(error.message));
  return page;
}

beforeAll(async () => {
  mkdirSync(join(ROOT, 'dist'), { recursive: true });
  // The stage is inside the repository (the site's config imports vitepress from its node_modules).
  stage = mkdtempSync(join(ROOT, 'dist', 'docs-test-src-'));
  out = mkdtempSync(join(tmpdir(), 'docs-site-'));
  // Built in a network namespace of its own where the machine allows one (root, as CI
  // runs): a build that fetched anything would fail there rather than pass by reaching out.
  const offline = spawnSync('unshare', ['--net', 'true']).status === 0;
  builtOffline = offline;
  const build = `const { buildSite } = await import(${JSON.stringify(join(ROOT, 'scripts', 'docs.ts'))}); await buildSite(${JSON.stringify(out)}, { stage: ${JSON.stringify(stage)}, reference: false });`;
  const command = offline ? ['unshare', ['--net', process.execPath, '--input-type=module', '-e', build]] as const : [process.execPath, ['--input-type=module', '-e', build]] as const;
  const built = spawnSync(command[0], command[1], { cwd: ROOT, encoding: 'utf8', timeout: 110_000 });
  if (built.status !== 0) throw new Error(`the docs build failed${offline ? ' without a network' : ''}:\n${built.stdout}${built.stderr}`);
  server = createServer((req, res) => {
    const file = fileOf(new URL(req.url ?? '/', 'http://127.0.0.1').pathname);
    if (!file.startsWith(out) || !existsSync(file)) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'Content-Type': TYPES[extname(file)] ?? 'application/octet-stream' }).end(readFileSync(file));
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await new Promise((done) => server?.close(done));
  if (out) rmSync(out, { recursive: true, force: true });
  if (stage) rmSync(stage, { recursive: true, force: true });
});

describe('the docs site', () => {
  it('builds with no network (where the machine gives a process a network namespace of its own)', () => {
    // CI and the development machines run as root, where unshare works: there this holds.
    if (process.getuid?.() === 0) expect(builtOffline).toBe(true);
  });

  it('has the guides in reading order, the changelog and the reference', () => {
    const pages = readdirSync(out).filter((name) => name.endsWith('.html'));
    for (const name of ['index', 'getting-started', 'webhooks', 'rate-limits-and-credits', 'sandbox-clock', 'running-the-server', 'conformance', 'receivers-and-clients', 'mocking', 'contract', 'changelog', 'benchmarks', 'publishing']) {
      expect(pages, name).toContain(`${name}.html`);
    }
    expect(existsSync(join(out, 'reference', 'index.html'))).toBe(true);
    expect(existsSync(join(out, 'reference', 'changelog.html'))).toBe(true);
    // The changelog page is the contract's, not the stub of docs/changelog.md.
    expect(readFileSync(join(out, 'changelog.html'), 'utf8')).toMatch(/Unreleased/);
  });

  it('loads every page with nothing off the machine, every internal link leading to a page and heading that exist, and no code block wider than a phone', async () => {
    const page = await newPage();
    const pages = readdirSync(out).filter((name) => name.endsWith('.html') && name !== '404.html');
    const broken: string[] = [];
    const overflowing: string[] = [];
    let linksChecked = 0;
    let blocksChecked = 0;
    for (const name of pages) {
      await page.goto(`${origin}/${name}`, { waitUntil: 'load' });
      // The theme is hydrated: the page's own script ran.
      await page.waitForSelector('.VPContent');
      const hrefs = await page.$$eval('a[href]', (links) => links.map((a) => (a as unknown as { href: string }).href));
      for (const href of hrefs) {
        const url = new URL(href);
        if (url.origin !== origin) continue;
        linksChecked++;
        const file = fileOf(url.pathname);
        if (!existsSync(file)) {
          broken.push(`${name}: ${href} (no ${file.slice(out.length)})`);
          continue;
        }
        const id = decodeURIComponent(url.hash.slice(1));
        if (id && !readFileSync(file, 'utf8').includes(`id="${id}"`)) broken.push(`${name}: ${href} (no heading #${id})`);
      }
      const sizes = await page.$$eval('div[class*="language-"]', (blocks) =>
        blocks.map((block) => {
          const b = block as unknown as { getBoundingClientRect(): { right: number }; querySelector(s: string): { scrollWidth: number; clientWidth: number } | null; ownerDocument: { defaultView: { getComputedStyle(e: unknown): { overflowX: string } } } };
          const pre = b.querySelector('pre');
          const overflowX = pre ? b.ownerDocument.defaultView.getComputedStyle(pre).overflowX : 'visible';
          return { right: b.getBoundingClientRect().right, scrolls: overflowX === 'auto' || overflowX === 'scroll', fits: !pre || pre.scrollWidth <= pre.clientWidth };
        }),
      );
      const width = await page.evaluate(() => (globalThis as unknown as { innerWidth: number }).innerWidth);
      sizes.forEach((size, i) => {
        blocksChecked++;
        if (size.right > width + 1 || !(size.scrolls || size.fits)) overflowing.push(`${name}: code block ${i + 1} (right edge ${size.right} of ${width})`);
      });
      const pageWidth = await page.evaluate(() => (globalThis as unknown as { document: { documentElement: { scrollWidth: number } } }).document.documentElement.scrollWidth);
      if (pageWidth > width + 1) overflowing.push(`${name}: the page is ${pageWidth} px wide on a ${width} px screen`);
    }
    await page.close();

    expect(pages.length).toBeGreaterThan(10);
    expect(linksChecked).toBeGreaterThan(100);
    expect(blocksChecked).toBeGreaterThan(30);
    expect(broken).toEqual([]);
    expect(overflowing).toEqual([]);
    expect(offMachine).toEqual([]);
    expect(pageErrors).toEqual([]);
  }, 60_000);

  it('finds a guide by searching, offline', async () => {
    const page = await newPage();
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.goto(`${origin}/index.html`, { waitUntil: 'load' });
    await page.click('.VPNavBarSearch button');
    await page.fill('.VPLocalSearchBox input', 'Retry-After');
    await expect.poll(() => page.$$eval('.VPLocalSearchBox .result', (results) => results.map((r) => (r as unknown as { href: string }).href)), { timeout: 10_000 }).toEqual(expect.arrayContaining([expect.stringContaining('rate-limits-and-credits')]));
    await page.close();
    expect(offMachine).toEqual([]);
  }, 30_000);
});

describe('the guides', () => {
  const guide = (name: string) => readFileSync(join(ROOT, 'docs', `${name}.md`), 'utf8');

  it('show a create with webhook_url and its receiver, Retry-After handled in code, the receiver and proxy modes, and MSW', () => {
    expect(guide('getting-started')).toMatch(/"webhook_url":"http:\/\/127\.0\.0\.1:4000\/webhooks"/);
    expect(guide('getting-started')).toContain('webhookReceiver({');
    expect(guide('rate-limits-and-credits')).toMatch(/```ts[\s\S]*headers\.get\('Retry-After'\)[\s\S]*```/);
    expect(guide('receivers-and-clients')).toContain('npm run conformance -- receiver --url');
    expect(guide('receivers-and-clients')).toContain('npm run conformance -- proxy --upstream');
    expect(guide('mocking')).toContain("import { createSandbox } from '@avatar-service/msw';");
  });

  it('quote every figure of a run from its record (node scripts/docFigures.ts --write fills them)', () => {
    const bench = readRunRecords();
    for (const doc of figureDocs()) {
      const text = readFileSync(join(ROOT, doc), 'utf8');
      expect(fillFigures(text, bench, doc), `${doc} quotes another figure than the recorded run`).toBe(text);
    }
    expect(guide('conformance')).toMatch(/<!-- run:conformance\.seconds -->[\d.]+<!-- \/run --> s/);
  });

  it('show the workflows that publish the site and run the runner in CI as they are in the repository', () => {
    // The build puts each file where its guide says <!-- include: path -->.
    expect(guide('publishing')).toMatch(/^<!-- include: \.github\/workflows\/docs\.yml -->$/m);
    expect(guide('conformance')).toMatch(/^<!-- include: conformance\/examples\/github-actions\.yml -->$/m);
    // The page's text, without the highlighter's spans.
    const site = (page: string) => readFileSync(join(out, `${page}.html`), 'utf8').replace(/<[^>]+>/g, '');
    expect(site('publishing')).toContain('npm run docs');
    expect(site('publishing')).toContain('actions/deploy-pages');
    expect(site('conformance')).toContain('avatar-conformance compare');
    expect(readFileSync(join(ROOT, '.github', 'workflows', 'docs.yml'), 'utf8')).toContain('run: npm run docs');
  });
});
