// A ready video played as a front end would: in Chromium, through the server's URL, in a
// <video> element with a <track>: it plays for its record's duration in the frame asked
// for, with the script's cues, the portrait and the captions in the picture. What the
// picture holds is the engine's work, whichever store keeps the file, so this file runs
// on the embedded store only (vitest.config.ts); the kept bytes, their ranges and their
// absence before ready are proven on both stores by video.test.ts.
import { chromium, type Browser, type Page } from 'playwright-core';
import { PNG } from 'pngjs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { LAYOUTS } from '../../src/engine/scene.ts';
import { captionCues, VIDEO_FPS } from '../../src/engine/timeline.ts';
import { GENEROUS_PLAN, startTestService, type TestService } from '../support/harness.ts';

const FRAME_SECONDS = 1 / VIDEO_FPS;
/**
 * Videos here are rendered for real, a CPU-bound job: on a machine whose cores are busy
 * with other work one takes several times its quiet time. What these tests judge is the
 * file, not how fast it came, so they wait for it as long as a loaded machine needs
 * (the render's speed is the benchmark's to measure).
 */
const RENDER_WAIT_MS = 120_000;
vi.setConfig({ testTimeout: RENDER_WAIT_MS + 30_000, hookTimeout: RENDER_WAIT_MS + 30_000 });
const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-quic', '--no-first-run', '--disable-component-update', '--disable-sync', '--autoplay-policy=no-user-gesture-required'];

const SCRIPT = 'Three weeks with this serum and my skin has never looked better. Here is my morning routine.';

let svc: TestService;
let key: string;
let avatarId: string;
let browser: Browser;

beforeAll(async () => {
  svc = await startTestService();
  key = (await svc.account({ plan: GENEROUS_PLAN, credits: 100_000 })).api_key;
  const avatar = await svc.request('POST', '/v1/avatars', { key, json: { type: 'props', name: 'Ama', ethnicity: 'Black', sex: 'female', age: 28 } });
  avatarId = (await svc.waitTerminal(`/v1/avatars/${avatar.body.id}`, key, RENDER_WAIT_MS)).id;
  browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
});
afterAll(async () => {
  await browser?.close();
  await svc?.dispose();
});

async function readyVideo(script: string, aspectRatio: string) {
  const created = await svc.request('POST', '/v1/avatar-videos', { key, json: { avatar_id: avatarId, script, aspect_ratio: aspectRatio } });
  return svc.waitTerminal(`/v1/avatar-videos/${created.body.id}`, key, RENDER_WAIT_MS);
}

// The few DOM members the browser-side functions use. tsconfig carries no DOM library
// (the server code must not see browser globals), and Playwright runs these functions
// from their source text, so describing them here is all the typing they need.
interface VideoElement extends EventTarget {
  readyState: number;
  duration: number;
  videoWidth: number;
  videoHeight: number;
  currentTime: number;
  error: { message: string } | null;
  style: { width: string; height: string };
  play(): Promise<void>;
  pause(): void;
}
interface TrackElement extends EventTarget {
  readyState: number;
  track: { mode: string; cues: ArrayLike<{ startTime: number; endTime: number; text: string }> | null };
}
interface BrowserGlobals {
  document: { getElementById(id: string): unknown };
  requestAnimationFrame(callback: () => void): number;
}

/**
 * A page on the server's own origin, as the links give it (a <track> loads from its page's
 * origin only), with the video and its captions: a page of the server's is opened and its
 * content replaced, so Chromium fetches both from the server itself.
 */
async function playerPage(video: { video_url: string; captions_url: string }): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1400, height: 1400 } });
  await page.goto(`${new URL(video.video_url).origin}/healthz`);
  await page.setContent(
    `<!doctype html><body style="margin:0;background:#000"><video id="v" muted playsinline preload="auto" src="${video.video_url}"><track id="t" kind="captions" srclang="en" src="${video.captions_url}"></video></body>`,
  );
  return page;
}

interface Played {
  duration: number;
  width: number;
  height: number;
  cues: { start: number; end: number; text: string }[];
  playedTo: number;
}

/** Loads the video and its track, plays a little, and reads what the element knows. */
const play = (page: Page) =>
  page.evaluate(async (): Promise<Played> => {
    const { document } = globalThis as unknown as BrowserGlobals;
    const v = document.getElementById('v') as VideoElement;
    const track = document.getElementById('t') as TrackElement;
    track.track.mode = 'hidden'; // loaded and read, not drawn over the picture
    const once = (target: EventTarget, type: string) => new Promise((resolve, reject) => {
      target.addEventListener(type, resolve, { once: true });
      target.addEventListener('error', () => reject(new Error(`${type}: ${(v.error && v.error.message) || 'error'}`)), { once: true });
    });
    if (v.readyState < 1) await once(v, 'loadedmetadata');
    if (track.readyState !== 2) await once(track, 'load');
    await v.play();
    while (v.currentTime < 0.3) await once(v, 'timeupdate');
    v.pause();
    const cues = Array.from(track.track.cues ?? [], (c) => ({ start: c.startTime, end: c.endTime, text: c.text }));
    return { duration: v.duration, width: v.videoWidth, height: v.videoHeight, cues, playedTo: v.currentTime };
  });

/** Shows the frame at `seconds` and takes a picture of the element, at the video's own size. */
async function frameAt(page: Page, seconds: number): Promise<PNG> {
  await page.evaluate(async (t) => {
    const browser = globalThis as unknown as BrowserGlobals;
    const v = browser.document.getElementById('v') as VideoElement;
    v.style.width = `${v.videoWidth}px`;
    v.style.height = `${v.videoHeight}px`;
    const seeked = new Promise((resolve) => v.addEventListener('seeked', resolve, { once: true }));
    v.currentTime = t;
    await seeked;
    await new Promise<void>((resolve) => browser.requestAnimationFrame(() => browser.requestAnimationFrame(resolve)));
  }, seconds);
  return PNG.sync.read(await page.locator('#v').screenshot());
}

const pixel = (image: PNG, x: number, y: number): [number, number, number] => {
  const i = (image.width * Math.round(y) + Math.round(x)) * 4;
  return [image.data[i]!, image.data[i + 1]!, image.data[i + 2]!];
};

/** Share of the pixels of a band of rows that are near white (caption text) and near the caption box's dark. */
function captionInk(image: PNG, top: number, height: number) {
  let white = 0;
  let dark = 0;
  for (let y = top; y < top + height; y++) {
    for (let x = 0; x < image.width; x++) {
      const [r, g, b] = pixel(image, x, y);
      if (r > 225 && g > 225 && b > 225) white++;
      if (r < 70 && g < 70 && b < 80) dark++;
    }
  }
  const all = image.width * height;
  return { white: white / all, dark: dark / all };
}

/** Share of pixels that differ clearly between two same-sized images, within a band of rows. */
function differing(a: PNG, b: PNG, top = 0, height = a.height): number {
  let n = 0;
  for (let y = top; y < top + height; y++) {
    for (let x = 0; x < a.width; x++) {
      const [p, q] = [pixel(a, x, y), pixel(b, x, y)];
      if (Math.abs(p[0] - q[0]) + Math.abs(p[1] - q[1]) + Math.abs(p[2] - q[2]) > 60) n++;
    }
  }
  return n / (a.width * height);
}

describe('a ready video played in Chromium', () => {
  it.each([
    ['9:16', 720, 1280],
    ['16:9', 1280, 720],
  ] as const)('%s: plays for its record\'s duration at %ix%i, with the script\'s cues, the portrait and the captions in the picture', async (ratio, width, height) => {
    const video = await readyVideo(SCRIPT, ratio);
    const page = await playerPage(video);
    try {
      const played = await play(page);

      expect(played.playedTo).toBeGreaterThanOrEqual(0.3);
      expect(Math.abs(played.duration - video.duration_seconds)).toBeLessThanOrEqual(FRAME_SECONDS);
      expect([played.width, played.height]).toEqual([width, height]);
      const expected = captionCues(SCRIPT).map((c) => ({ start: c.start / VIDEO_FPS, end: c.end / VIDEO_FPS, text: c.text }));
      expect(played.cues.map((c) => c.text)).toEqual(expected.map((c) => c.text));
      played.cues.forEach((cue, i) => {
        expect(Math.abs(cue.start - expected[i]!.start)).toBeLessThan(0.001);
        expect(Math.abs(cue.end - expected[i]!.end)).toBeLessThan(0.001);
      });

      // Midway through the first cue and the second: the picture, the portrait and each caption.
      const mid = (c: { start: number; end: number }) => (c.start + c.end) / 2;
      const [first, second] = [await frameAt(page, mid(expected[0]!)), await frameAt(page, mid(expected[1]!))];
      const layout = LAYOUTS[ratio];
      expect([first.width, first.height]).toEqual([width, height]);

      const ink = captionInk(first, layout.caption.top, layout.caption.height);
      expect(ink.white).toBeGreaterThan(0.01); // white letters...
      expect(ink.dark).toBeGreaterThan(0.05); // ...on the caption's dark box
      expect(captionInk(first, 0, Math.round(layout.caption.top * 0.3)).dark).toBeLessThan(0.01); // and no box above it

      const corner = pixel(first, 8, 8);
      const face = pixel(first, layout.portrait.cx, layout.portrait.cy);
      expect(Math.abs(face[0] - corner[0]) + Math.abs(face[1] - corner[1]) + Math.abs(face[2] - corner[2])).toBeGreaterThan(60);

      // Another cue, another caption; the portrait stays (it only bobs).
      expect(differing(first, second, layout.caption.top, layout.caption.height)).toBeGreaterThan(0.01);
      const portraitTop = layout.portrait.cy - layout.portrait.size / 2;
      expect(differing(first, second, portraitTop, layout.portrait.size)).toBeLessThan(0.25);
    } finally {
      await page.close();
    }
  });
});
