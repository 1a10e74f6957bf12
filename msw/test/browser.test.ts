// The package in a real browser: the example page (msw/example/) served by plain files
// on 127.0.0.1, its bundle made by the same esbuild step the package's browser entry is,
// the sandbox in MSW's service worker, headless Chromium. The page creates an avatar
// and shows it going ready; then the page's own client makes a video, runs out of
// credits and hits the generation limit. No server of the API runs; every answer the
// page got is held to the contract.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleForBrowser } from '../../scripts/msw-browser.ts';
import { contractViolations } from '../../server/test/support/contractViolations.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-quic', '--disable-dev-shm-usage'];

let dir: string;
let server: Server;
let origin: string;
let browser: Browser;
let page: Page;
/** What reached the file server: the API's paths must never be among them. */
const served: string[] = [];
const pageErrors: string[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'msw-page-'));
  await bundleForBrowser(join(ROOT, 'msw/example/main.ts'), join(dir, 'main.js'));
  const files: Record<string, [string, string]> = {
    '/': [join(ROOT, 'msw/example/index.html'), 'text/html; charset=utf-8'],
    '/main.js': [join(dir, 'main.js'), 'text/javascript; charset=utf-8'],
    // The file `npx msw init <public dir>` copies, served from the installed msw so the two never differ.
    '/mockServiceWorker.js': [join(ROOT, 'node_modules/msw/lib/mockServiceWorker.js'), 'text/javascript; charset=utf-8'],
  };
  server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://127.0.0.1').pathname;
    served.push(path);
    const file = files[path];
    if (!file) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'Content-Type': file[1] }).end(readFileSync(file[0]));
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  page = await browser.newPage();
  page.on('pageerror', (error) => pageErrors.push(error.message));
  await page.goto(`${origin}/`);
  // A page that failed to start says why, rather than the wait timing out in silence.
  await Promise.race([
    page.waitForSelector('body[data-ready="true"]'),
    new Promise((_, fail) => page.on('pageerror', (error) => fail(new Error(`the page failed: ${error.message}`)))),
  ]);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await new Promise((done) => server?.close(done));
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('the sandbox in a real browser, through msw/browser', () => {
  it('shows an avatar going from queued to ready when the page moves its sandbox clock', async () => {
    await page.click('#create');
    await expect.poll(() => page.textContent('#status')).toMatch(/^(queued|processing)$/);
    // The page shows the balance after the status, from a read of its own that follows.
    await expect.poll(() => page.textContent('#credits')).toBe('90');
    await page.click('#skip');
    await expect.poll(() => page.textContent('#status')).toBe('ready');
    // The preview the worker served is a picture the page could draw.
    await expect.poll(() => page.$eval('#preview', (img) => (img as unknown as { naturalWidth: number }).naturalWidth)).toBe(64);
  });

  it('makes a video, runs out of credits (402) and hits the generation limit (429) with the page’s own client', async () => {
    const outcome = await page.evaluate(async () => {
      const demo = (globalThis as any).avatarDemo;
      const client = demo.makeClient(demo.account.apiKey);
      const avatars = (await client.listAvatars()).data.data;
      const video = await client.createAvatarVideo({ avatar_id: avatars[0].id, script: 'Made in the page.' });
      await client.advanceSandboxClock({ seconds: 10 });
      const made = await client.getAvatarVideo(video.data.id);
      // 100 credits: 10 for the avatar, 20 for the video; three more videos leave 10.
      for (let i = 0; i < 3; i++) await client.createAvatarVideo({ avatar_id: avatars[0].id, script: `Video ${i}` });
      const broke = await client.createAvatarVideo({ avatar_id: avatars[0].id, script: 'One too many.' });
      // A fresh account with credits to spare: ten creates fill the minute's window. Time
      // runs in the page, so the burst starts as a minute does, with the whole minute to run.
      await demo.sandbox.clock.set(Math.ceil(demo.sandbox.clock.now() / 60_000) * 60_000);
      const rich = demo.makeClient((await demo.sandbox.createAccount({ credits: 1000 })).apiKey);
      const statuses: number[] = [];
      for (let i = 0; i < 10; i++) statuses.push((await rich.createAvatar({ type: 'prompt', name: `A${i}`, prompt: 'x' })).response.status);
      const limited = await rich.createAvatar({ type: 'prompt', name: 'Over', prompt: 'x' });
      return {
        video: made.data.status,
        broke: { status: broke.response.status, code: broke.error?.code },
        statuses,
        limited: {
          status: limited.response.status,
          code: limited.error?.code,
          retryAfter: Number(limited.response.headers.get('Retry-After')),
          limit: limited.response.headers.get('RateLimit-Limit'),
          remaining: limited.response.headers.get('RateLimit-Remaining'),
          reset: Number(limited.response.headers.get('RateLimit-Reset')),
        },
      };
    });

    expect(outcome.video).toBe('ready');
    expect(outcome.broke).toEqual({ status: 402, code: 'insufficient_credits' });
    expect(outcome.statuses).toEqual(Array(10).fill(202));
    expect(outcome.limited).toMatchObject({ status: 429, code: 'rate_limit_exceeded', limit: '10', remaining: '0' });
    expect(outcome.limited.retryAfter).toBeGreaterThan(50);
    expect(outcome.limited.retryAfter).toBeLessThanOrEqual(60);
    expect(outcome.limited.reset).toBe(outcome.limited.retryAfter);
  });

  it('got only answers the contract allows, and none of them from the file server', async () => {
    const answers = (await page.evaluate(() => (globalThis as any).avatarDemo.answers)) as { method: string; url: string; status: number; headers: [string, string][]; text: string }[];
    expect(answers.length).toBeGreaterThan(20);
    const violations = answers.flatMap((a) => {
      const url = new URL(a.url);
      const headers = new Headers(a.headers);
      const json = a.text && (headers.get('content-type') ?? '').includes('json') ? JSON.parse(a.text) : undefined;
      return contractViolations({ method: a.method, path: url.pathname + url.search, status: a.status, headers, text: a.text, body: json });
    });
    expect(violations).toEqual([]);
    expect(served.filter((p) => p.startsWith('/v1/'))).toEqual([]);
  });
});
