// A video's file is made by its job, not by its first download: the job is `ready` only
// once the store keeps the MP4, its video_url then serves it at once (whole, or the range
// asked for, across the store's pieces), a download never renders, and a render that fails
// fails the job through the runner's failure path (credits released, webhook sent).
// Renders are fair between accounts: one account's long videos never hold another's.
// The render is the engine's seam here (a file of known bytes, or a failure, or a render
// held until the test lets it go); the real renderer is proved in engine/video.test.ts.
import { writeFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GenerationEngine } from '../../src/domain/engine.ts';
import type { Job } from '../../src/domain/model.ts';
import { createBuiltinEngine } from '../../src/engine/builtin.ts';
import type { VideoRequest } from '../../src/engine/video.ts';
import { createVideos, type Render } from '../../src/engine/videos.ts';
import { GENEROUS_PLAN, promptAvatar, startTestService, type TestService } from '../support/harness.ts';
import { startReceiver, type TestReceiver } from '../support/receiver.ts';

/** The bytes the seam renders for a script: 2.5 MB, so the PostgreSQL store keeps it in three pieces. */
function fakeMp4(script: string): Buffer {
  const bytes = Buffer.alloc(2_500_000);
  for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 31 + script.length) & 0xff;
  return bytes;
}

/** A promise the test settles by hand. */
function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

const renders: string[] = [];
/** Renders of scripts starting with "hold" wait for this; "unrenderable" ones fail. */
let held = deferred();

const render: Render = async ({ video }, out) => {
  renders.push(video.script);
  if (video.script.startsWith('unrenderable')) throw new Error('the video could not be rendered: FFmpeg exited 1: no such filter');
  if (video.script.startsWith('hold')) await held.promise;
  await writeFile(out, fakeMp4(video.script));
};

let svc: TestService;
let receiver: TestReceiver;
let key: string;
let avatarId: string;

/** What was asked of the engine's port: jobs generated and files made on request, by job ID. */
const generated: string[] = [];
const asked: string[] = [];

beforeAll(async () => {
  receiver = await startReceiver();
  const builtin = createBuiltinEngine({ avatarMs: 0, videoMs: 0, render });
  const engine: GenerationEngine = {
    generate: (job, signal, inputs) => (generated.push(job.id), builtin.generate(job, signal, inputs)),
    artifact: (request) => (asked.push(`${request.job.id}/${request.name}`), builtin.artifact(request)),
    close: () => builtin.close!(),
  };
  svc = await startTestService({ engine, env: { WEBHOOK_POLL_MS: '20' } });
  key = (await svc.account({ plan: GENEROUS_PLAN, credits: 100_000 })).api_key;
  const avatar = await svc.request('POST', '/v1/avatars', { key, json: promptAvatar() });
  avatarId = (await svc.waitTerminal(`/v1/avatars/${avatar.body.id}`, key)).id;
});
afterAll(async () => {
  held.resolve();
  await svc?.dispose();
  await receiver?.close();
});

const local = (url: string) => url.replace(svc.config.publicBaseUrl, svc.url);

async function video(script: string, as = key, extra: Record<string, unknown> = {}): Promise<string> {
  const avatar = as === key ? avatarId : (await svc.waitTerminal(`/v1/avatars/${(await svc.request('POST', '/v1/avatars', { key: as, json: promptAvatar() })).body.id}`, as)).id;
  const created = await svc.request('POST', '/v1/avatar-videos', { key: as, json: { avatar_id: avatar, script, ...extra } });
  expect(created.status).toBe(202);
  return created.body.id as string;
}

describe('a ready video', () => {
  it('serves the file its job made at once, whole and in a range across the pieces it is kept in', async () => {
    const script = 'Ready means the file exists.';
    const id = await video(script);
    const ready = await svc.waitTerminal(`/v1/avatar-videos/${id}`, key);
    const made = fakeMp4(script);

    const whole = await fetch(local(ready.video_url));
    const part = await fetch(local(ready.video_url), { headers: { Range: 'bytes=1048000-1049999' } });
    const head = await fetch(local(ready.video_url), { method: 'HEAD' });

    expect(ready.status).toBe('ready');
    expect(whole.status).toBe(200);
    expect(whole.headers.get('content-type')).toBe('video/mp4');
    expect(whole.headers.get('content-length')).toBe(String(made.length));
    expect(Buffer.from(await whole.arrayBuffer()).equals(made)).toBe(true);
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe(`bytes 1048000-1049999/${made.length}`);
    expect([head.status, head.headers.get('content-length')]).toEqual([200, String(made.length)]);
    expect(Buffer.from(await part.arrayBuffer()).equals(made.subarray(1_048_000, 1_050_000))).toBe(true);
  });

  it('is never rendered again by its downloads', async () => {
    const script = 'Downloads never render.';
    const id = await video(script);
    const ready = await svc.waitTerminal(`/v1/avatar-videos/${id}`, key);
    const before = renders.filter((s) => s === script).length;

    const statuses = await Promise.all([1, 2, 3].map(async () => (await fetch(local(ready.video_url))).status));

    expect(before).toBe(1);
    expect(statuses).toEqual([200, 200, 200]);
    expect(renders.filter((s) => s === script)).toHaveLength(1);
    // At the engine's port: the job was generated once, and no download asked it for the file.
    expect(generated.filter((g) => g === id)).toHaveLength(1);
    expect(asked.filter((a) => a.startsWith(id))).toEqual([]);
  });
});

describe('a video that cannot be rendered', () => {
  it('fails as generation_failed with its error object, its credits released, its failed webhook sent, and no file', async () => {
    const id = await video('unrenderable script', key, { webhook_url: `${receiver.url}/failed` });
    const failed = await svc.waitTerminal(`/v1/avatar-videos/${id}`, key);
    const [delivery] = await receiver.waitFor(1);
    const job = (await svc.store.jobs.getJob(id)) as Job;
    const balance = await svc.store.jobs.creditBalance(job.accountId, job.period);

    expect(failed).toMatchObject({ status: 'failed', error: { code: 'generation_failed', message: expect.any(String) }, video_url: null });
    expect(failed.error.message).not.toContain('FFmpeg'); // the reason is the operator's, in the log
    expect(balance.reserved).toBe(0);
    expect(delivery!.body).toMatchObject({ type: 'avatar_video.failed', data: { object: { id, status: 'failed', error: { code: 'generation_failed' } } } });
    expect((await fetch(`${svc.url}/files/${id}/video.mp4`)).status).toBe(404);
  });
});

describe('renders between accounts', () => {
  it("give another account's short video a turn beside one account's long ones, in the engine", async () => {
    const started: string[] = [];
    const gates = new Map<string, () => void>();
    const gated: Render = (request) => {
      started.push(request.video.script);
      return new Promise<void>((resolve) => gates.set(request.video.script, resolve));
    };
    const request = (script: string): VideoRequest => ({ avatar: { type: 'prompt', name: 'A', prompt: 'p' }, video: { avatar_id: 'av_x', script, aspect_ratio: '1:1' } });
    const never = new AbortController().signal;
    const videos = createVideos({ render: gated, slots: 1 });

    const done = ['a1', 'a2', 'a3'].map((s) => videos.render('acc_a', request(s), '/dev/null', never));
    const b = videos.render('acc_b', request('b1'), '/dev/null', never);
    expect(started).toEqual(['a1']);
    gates.get('a1')!();
    await done[0];
    expect(started).toEqual(['a1', 'b1']); // b1 went before a2, which was asked for first
    gates.get('b1')!();
    await b;
    gates.get('a2')!();
    await done[1];
    gates.get('a3')!();
    await done[2];
    expect(started).toEqual(['a1', 'b1', 'a2', 'a3']);

    // With two slots, an account renders one video at a time: the other slot is another's at once.
    const two = createVideos({ render: gated, slots: 2 });
    started.length = 0;
    const longs = ['x1', 'x2'].map((s) => two.render('acc_x', request(s), '/dev/null', never));
    const short = two.render('acc_y', request('y1'), '/dev/null', never);
    expect(started).toEqual(['x1', 'y1']);
    gates.get('y1')!();
    await short;
    gates.get('x1')!();
    await longs[0];
    expect(started).toEqual(['x1', 'y1', 'x2']);
    gates.get('x2')!();
    await longs[1];
  });

  it("make another account's short video ready while one account's long videos are still rendering, in the service", async () => {
    held = deferred();
    const long = await Promise.all(['hold one', 'hold two', 'hold three'].map((s) => video(s)));
    const other = (await svc.account({ plan: GENEROUS_PLAN, credits: 100_000 })).api_key;

    const short = await svc.waitTerminal(`/v1/avatar-videos/${await video('A short one.', other)}`, other);
    const waiting = await Promise.all(long.map(async (id) => (await svc.request('GET', `/v1/avatar-videos/${id}`, { key })).body.status));

    expect(short.status).toBe('ready');
    expect(waiting.every((s) => s === 'queued' || s === 'processing')).toBe(true);
    // The worker took one of the first account's videos at a time: the others were not started.
    expect(renders.filter((s) => s.startsWith('hold'))).toHaveLength(1);
    held.resolve();
    for (const id of long) expect((await svc.waitTerminal(`/v1/avatar-videos/${id}`, key)).status).toBe('ready');
  });
});
