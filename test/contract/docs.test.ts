// The docs page (scripts/docs.ts) is one file that renders offline: opened from disk in
// Chromium with every non-file request refused, it must still show every operation and
// every webhook of generated/openapi.json, and must not even try the network.
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { buildDocs, offlineProblems } from '../../scripts/docs.ts';
import { ROOT, listOperations, listWebhooks, loadDocument } from './support/openapi.ts';
import { renderRoute, routeOfSidebarEntry, type RenderedItem } from './support/redoc-page.ts';

const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-quic',
  '--no-first-run',
  '--disable-component-update',
  '--disable-sync',
];

const doc = loadDocument();
const operations = listOperations(doc);
const webhooks = listWebhooks(doc);
// Redoc groups operations and webhooks by tag; these are the sidebar entries to open.
const tagsShown = [...new Set([...operations, ...webhooks].flatMap(({ operation }) => operation.tags ?? []))];

const createAvatarRequest = (doc.components as { schemas: Record<string, { oneOf: { $ref: string }[] }> }).schemas.AvatarCreateRequest!;
const variantTitles = createAvatarRequest.oneOf.map(({ $ref }) => {
  const name = $ref.split('/').pop()!;
  return String((doc.components as { schemas: Record<string, { title?: string }> }).schemas[name]!.title);
});
const collapse = (text: string) => text.replace(/\s+/g, ' ').trim();

describe('docs page built from generated/openapi.json', () => {
  let scratch: string;
  let browser: Browser | undefined;
  let html: string;
  const items = new Map<string, RenderedItem>();
  const remoteRequests: string[] = [];
  const pageErrors: string[] = [];
  let title = '';
  let pageText = '';

  beforeAll(async () => {
    scratch = mkdtempSync(join(tmpdir(), 'docs-test-'));
    const file = await buildDocs(join(scratch, 'index.html'));
    html = readFileSync(file, 'utf8');

    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    // Refuse the network outright and remember any attempt: offline means none.
    await page.route('**/*', (route) => {
      const url = route.request().url();
      if (url.startsWith('file:')) return route.continue();
      remoteRequests.push(url);
      return route.abort('internetdisconnected');
    });
    page.on('pageerror', (error) => pageErrors.push(error.message));

    await page.goto(pathToFileURL(file).href, { waitUntil: 'load' });
    title = await page.title();
    for (const tag of tagsShown) {
      for (const item of await renderRoute(page, await routeOfSidebarEntry(page, tag))) items.set(item.sectionId, item);
    }
    // The overview (the document's description) has a route of its own: the first one.
    await page.evaluate(() => {
      (globalThis as unknown as { location: { hash: string } }).location.hash = '#/';
    });
    // Read the text in the same turn that finds the overview in it: the overview can show
    // (an element with its text visible) and the page's text still be the last tag's a
    // moment later, which reading it in a second step sometimes caught on a busy machine.
    const overview = await page.waitForFunction(
      () => {
        const text = (globalThis as unknown as { document: { body: { innerText: string } } }).document.body.innerText;
        return text.includes('Order of checks') ? text : false;
      },
      undefined,
      { timeout: 10_000 },
    );
    pageText = collapse(String(await overview.jsonValue()));
    // Kept for a reader of the CI run: the overview as a browser shows it, fully loaded.
    mkdirSync(join(ROOT, '.reports'), { recursive: true });
    await page.screenshot({ path: join(ROOT, '.reports', 'docs-overview.png'), fullPage: false });
  });

  afterAll(async () => {
    await browser?.close();
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

  test('embeds Redoc instead of loading scripts or styles from a CDN', () => {
    // Arrange: a page built the way --inlineBundle would not, for contrast.
    const cdnPage = '<script src="https://cdn.redocly.com/redoc/v3/redoc.standalone.js"></script>';

    // Act
    const builtProblems = offlineProblems(html);
    const cdnProblems = offlineProblems(cdnPage);

    // Assert
    expect(builtProblems).toEqual([]);
    expect(cdnProblems.some((p) => p.includes('cdn.redocly.com'))).toBe(true);
    expect(html).not.toMatch(/<(script|link)\b[^>]*\s(src|href)=["']?https?:/i);
  });

  test('states the limits and the prices in its text, not only inside examples', () => {
    for (const words of ['every GET under /v1 120 10,000', 'POST /v1/avatars, POST /v1/avatar-videos, POST /v1/webhook-events/{id}/replay 10 300', '(sandbox keys only) 600 20,000', 'An avatar costs 10 credits and a video 20 credits', '1,000 credits a month']) {
      expect(pageText).toContain(words);
    }
    expect(pageText).not.toContain('Loading...');
  });

  test('shows the create-avatar variants by their type and title, each with its typed members', () => {
    const create = [...items.values()].find((item) => item.text.toLowerCase().includes('post /v1/avatars') && !item.text.includes('avatar-videos'));
    expect(create, 'the POST /v1/avatars section').toBeDefined();
    expect(create!.text).toContain('Discriminator prompt photo props');
    // Redoc labels the tabs by the discriminator's values; the variants' titles are in the body's text.
    expect(variantTitles).toEqual(['From a prompt', 'From a photo', 'From props']);
    for (const title of variantTitles) expect(create!.text).toContain(title);
    // The text rule shows as the PlainText schema and its pattern, between the bounds and "required".
    expect(create!.text).toMatch(/prompt string, \[ 1 \.\. 4000 \] characters \(PlainText\) \S+ Show pattern required/);
    expect(create!.text).not.toMatch(/case 1|prompt any|file any/);
  });

  test('reads as plain text: no clause or decision ID in what it renders (they live in x-clauses and x-decisions)', () => {
    const ID = /\b(?:AV|CR|RL|WH|ST|AUTH|VER|ND)-[A-Z0-9]+(?:-[A-Z0-9]+)*\b/g;
    const texts = [pageText, ...[...items.values()].map((item) => item.text)];

    expect(texts.flatMap((text) => text.match(ID) ?? [])).toEqual([]);
    expect(items.size).toBeGreaterThan(5);
  });

  test('is titled after the API', () => {
    expect(title).toBe(String((doc.info as { title?: unknown }).title));
  });

  test('opened every tag that holds an operation or a webhook', () => {
    expect(tagsShown.length).toBeGreaterThan(0);
    expect(items.size).toBeGreaterThanOrEqual(operations.length + webhooks.length);
  });

  test.each(operations)('shows $method $path by summary and by method and path', ({ method, path, operation }) => {
    const item = [...items.values()].find((i) => i.heading === collapse(operation.summary ?? ''));

    expect(item, `no operation headed "${operation.summary}"`).toBeDefined();
    expect(item?.text.toLowerCase()).toContain(`${method} ${path}`.toLowerCase());
  });

  test.each(webhooks)('shows the webhook $name', ({ name }) => {
    const headings = [...items.values()].map((i) => i.heading);

    expect(headings.some((h) => h === name || h.startsWith(`${name} `)), `headings: ${headings.join(' | ')}`).toBe(true);
  });

  test('rendered with no request to anything but file:// URLs', () => {
    expect(remoteRequests).toEqual([]);
  });

  test('rendered without a script error', () => {
    expect(pageErrors).toEqual([]);
  });
});
