// A ready video is real media: an MP4 (H.264 and AAC) in the frame asked for, as long as
// its record says, with the captions served beside it as WebVTT, kept by the store and
// answered whole or by byte range. ffprobe (Debian's FFmpeg, for tests only) reads the
// streams; videoPlayback.test.ts plays one in Chromium and looks at its picture.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Job } from '../../src/domain/model.ts';
import { createBuiltinEngine } from '../../src/engine/builtin.ts';
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

const SCRIPT = 'Three weeks with this serum and my skin has never looked better. Here is my morning routine.';
const OTHER_SCRIPT = 'Meal prep in ten minutes: rice, greens and a sauce you will want on everything.';

let svc: TestService;
let key: string;
let avatarId: string;
let scratch: string;

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'video-test-'));
  svc = await startTestService();
  key = (await svc.account({ plan: GENEROUS_PLAN, credits: 100_000 })).api_key;
  const avatar = await svc.request('POST', '/v1/avatars', { key, json: { type: 'props', name: 'Ama', ethnicity: 'Black', sex: 'female', age: 28 } });
  avatarId = (await svc.waitTerminal(`/v1/avatars/${avatar.body.id}`, key, RENDER_WAIT_MS)).id;
});
afterAll(async () => {
  await svc?.dispose();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

/** The server's own address for one of its public links. */
const local = (url: string) => url.replace(svc.config.publicBaseUrl, svc.url);

async function readyVideo(script: string, aspectRatio = '9:16') {
  const created = await svc.request('POST', '/v1/avatar-videos', { key, json: { avatar_id: avatarId, script, aspect_ratio: aspectRatio } });
  return svc.waitTerminal(`/v1/avatar-videos/${created.body.id}`, key, RENDER_WAIT_MS);
}

async function download(url: string, headers: Record<string, string> = {}) {
  const res = await fetch(local(url), { headers });
  return { res, bytes: Buffer.from(await res.arrayBuffer()) };
}

interface Probe {
  streams: { codec_type: string; codec_name: string; width?: number; height?: number; r_frame_rate?: string }[];
  format: { duration: string };
}

async function ffprobe(bytes: Buffer): Promise<Probe> {
  const file = join(scratch, `probe-${bytes.length}.mp4`);
  writeFileSync(file, bytes);
  const { stdout } = await promisify(execFile)('/usr/bin/ffprobe', ['-v', 'error', '-print_format', 'json', '-show_streams', '-show_format', file]);
  return JSON.parse(stdout) as Probe;
}

describe('a ready video', () => {
  it('is an H.264 and AAC MP4 in the frame asked for, as long as its record says to the frame', async () => {
    const video = await readyVideo(SCRIPT, '16:9');
    const { res, bytes } = await download(video.video_url);
    const probe = await ffprobe(bytes);

    expect(res.headers.get('content-type')).toBe('video/mp4');
    const picture = probe.streams.find((s) => s.codec_type === 'video')!;
    expect([picture.codec_name, picture.width, picture.height, picture.r_frame_rate]).toEqual(['h264', 1280, 720, '25/1']);
    expect(probe.streams.find((s) => s.codec_type === 'audio')?.codec_name).toBe('aac');
    expect(video.duration_seconds).toBe(6.8); // 17 words at 2.5 a second
    expect(Math.abs(Number(probe.format.duration) - video.duration_seconds)).toBeLessThan(FRAME_SECONDS / 2);
  });

  it('is made for a script with no words, still as long as its record says', async () => {
    const video = await readyVideo('   ', '1:1');
    const probe = await ffprobe((await download(video.video_url)).bytes);

    expect(video.status).toBe('ready');
    expect(probe.streams.map((s) => s.codec_type).sort()).toEqual(['audio', 'video']);
    expect(Math.abs(Number(probe.format.duration) - video.duration_seconds)).toBeLessThan(FRAME_SECONDS / 2);
  });

  it('is the same file for the same inputs and another for another script', async () => {
    const [first, again, other] = [await readyVideo(OTHER_SCRIPT), await readyVideo(OTHER_SCRIPT), await readyVideo(SCRIPT)];
    const bytes = async (video: { video_url: string }) => (await download(video.video_url)).bytes;
    const [a, b, c] = [await bytes(first), await bytes(again), await bytes(other)];

    expect(first.id).not.toBe(again.id);
    expect(b.equals(a)).toBe(true);
    expect(c.equals(a)).toBe(false);
  });

  it('has its captions beside it as WebVTT, the script in timed cues', async () => {
    const video = await readyVideo(SCRIPT);
    const { res, bytes } = await download(video.captions_url);
    const text = bytes.toString('utf8');

    expect(res.headers.get('content-type')).toBe('text/vtt; charset=utf-8');
    expect(text.startsWith('WEBVTT\n\n1\n00:00:00.000 --> ')).toBe(true);
    const cueTexts = text.trimEnd().split('\n\n').slice(1).map((block) => block.split('\n').slice(2).join(' '));
    expect(cueTexts.join(' ')).toBe(SCRIPT);
    expect(text.trimEnd().split('\n').at(-2)).toMatch(/ --> 00:00:06\.800$/u);
  });

  it('answers a byte range, as a player seeking in it asks', async () => {
    const video = await readyVideo(SCRIPT);
    const whole = (await download(video.video_url)).bytes;
    const { res, bytes } = await download(video.video_url, { Range: 'bytes=100-199' });

    expect(res.status).toBe(206);
    expect(res.headers.get('content-range')).toBe(`bytes 100-199/${whole.length}`);
    expect(bytes.equals(whole.subarray(100, 200))).toBe(true);
  });

  it('is not there for a video still under way or failed, nor under another name', async () => {
    const failed = await readyVideo('Drill [sandbox:fail]');
    const video = await readyVideo(SCRIPT);

    expect(failed.captions_url).toBeNull();
    expect((await download(`${svc.config.publicBaseUrl}/files/${failed.id}/video.mp4`)).res.status).toBe(404);
    expect((await download(`${svc.config.publicBaseUrl}/files/${video.id}/preview.png`)).res.status).toBe(404);
  });
});

describe('a video the engine cannot render', () => {
  it('fails its generation with the reason, and the engine renders the next one', async () => {
    const engine = createBuiltinEngine({ avatarMs: 0, videoMs: 0 });
    const video = (id: string, aspectRatio: string) => ({ id, kind: 'avatar_video', accountId: 'acc_x', status: 'processing', input: { avatar_id: 'av_x', script: 'Hello there.', aspect_ratio: aspectRatio } }) as unknown as Job;
    const running = new AbortController();
    try {
      await expect(engine.generate(video('vid_unrenderable', '4:3'), running.signal)).rejects.toThrow(/could not be rendered/u);

      const next = await engine.generate(video('vid_renderable', '1:1'), running.signal);
      expect(next.status).toBe('ready');
      const file = next.status === 'ready' ? next.files?.[0] : undefined;
      expect(file?.contentType).toBe('video/mp4');
      let bytes = 0;
      for await (const piece of file!.read()) bytes += piece.byteLength;
      expect(bytes).toBeGreaterThan(1000);
      if (next.status === 'ready') await next.discard?.();
    } finally {
      await engine.close?.();
    }
  });
});
