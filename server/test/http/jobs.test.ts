// Jobs from request to terminal state: polling (ST-POLL-TRUTH), terminal states that
// never change (ST-TERMINAL), ready and failed records (AV-GET, AV-FAILED-ERROR,
// VID-GET, VID-READY-URL, VID-FAILED-ERROR), videos only from ready avatars
// (AV-READY-BEFORE-VIDEO) and no access to another account's records.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { finishJob } from '../../src/domain/completion.ts';
import { GENEROUS_PLAN, promptAvatar, startTestService, type TestService } from '../support/harness.ts';

let svc: TestService;
let key: string;
let otherKey: string;

beforeAll(async () => {
  svc = await startTestService({ env: { ENGINE_AVATAR_MS: '30', ENGINE_VIDEO_MS: '30' } });
  key = (await svc.account({ plan: GENEROUS_PLAN, credits: 100_000 })).api_key;
  otherKey = (await svc.account({ plan: GENEROUS_PLAN })).api_key;
});
afterAll(() => svc.dispose());

async function readyAvatar(): Promise<string> {
  const created = await svc.request('POST', '/v1/avatars', { key, json: promptAvatar() });
  const avatar = await svc.waitTerminal(`/v1/avatars/${created.body.id}`, key);
  expect(avatar.status).toBe('ready');
  return avatar.id;
}

describe('an avatar', () => {
  it('moves from queued to ready and then serves its preview image (AV-GET)', async () => {
    const created = await svc.request('POST', '/v1/avatars', { key, json: promptAvatar() });

    const avatar = await svc.waitTerminal(`/v1/avatars/${created.body.id}`, key);

    expect(avatar).toMatchObject({ id: created.body.id, status: 'ready', error: null });
    expect(avatar.completed_at).not.toBeNull();
    const image = await fetch(avatar.preview_image_url.replace(svc.config.publicBaseUrl, svc.url));
    expect(image.status).toBe(200);
    expect(image.headers.get('content-type')).toBe('image/png');
    expect(Buffer.from(await image.arrayBuffer()).subarray(1, 4).toString()).toBe('PNG');
  });

  it('fails with an error object when the sandbox marker is in its name (AV-FAILED-ERROR)', async () => {
    const created = await svc.request('POST', '/v1/avatars', { key, json: promptAvatar({ name: 'Drill [sandbox:fail]' }) });

    const avatar = await svc.waitTerminal(`/v1/avatars/${created.body.id}`, key);

    expect(avatar.status).toBe('failed');
    expect(avatar.error).toEqual({ code: 'sandbox_forced_failure', message: expect.any(String) });
    expect(avatar.preview_image_url).toBeNull();
  });

  it('ignores the sandbox marker for live keys', async () => {
    const live = (await svc.account({ mode: 'live' })).api_key;
    const created = await svc.request('POST', '/v1/avatars', { key: live, json: promptAvatar({ name: 'Drill [sandbox:fail]' }) });

    expect((await svc.waitTerminal(`/v1/avatars/${created.body.id}`, live)).status).toBe('ready');
  });

  it('never leaves a terminal state, even when a late outcome arrives (ST-TERMINAL)', async () => {
    const id = await readyAvatar();
    const job = (await svc.store.jobs.getJob(id))!;

    const changed = await finishJob(svc.domain, job, { status: 'failed', error: { code: 'generation_failed', message: 'late' } });

    expect(changed).toBe(false);
    const again = await svc.request('GET', `/v1/avatars/${id}`, { key });
    expect(again.body.status).toBe('ready');
    expect(again.body.error).toBeNull();
  });

  it.each([
    ['an unknown ID', 'av_000000000000000000000000'],
    ['a malformed ID', 'not-an-id'],
    ['a video ID on the avatar path', 'vid_000000000000000000000000'],
  ])('answers 404 not_found for %s', async (_case, id) => {
    const r = await svc.request('GET', `/v1/avatars/${id}`, { key });

    expect(r.status).toBe(404);
    expect(r.body.code).toBe('not_found');
  });

  it("answers 404 for another account's avatar, exactly as for an unknown one", async () => {
    const id = await readyAvatar();

    const theirs = await svc.request('GET', `/v1/avatars/${id}`, { key: otherKey });
    const unknown = await svc.request('GET', '/v1/avatars/av_000000000000000000000000', { key: otherKey });

    expect(theirs.status).toBe(404);
    expect(theirs.body.detail.replace(id, 'ID')).toBe(unknown.body.detail.replace('av_000000000000000000000000', 'ID'));
  });
});

describe('an avatar video', () => {
  it('is made from a ready avatar, gets a video_url that serves an MP4 (VID-GET, VID-READY-URL)', async () => {
    const avatarId = await readyAvatar();
    const created = await svc.request('POST', '/v1/avatar-videos', { key, json: { avatar_id: avatarId, script: 'Three weeks with this serum and my skin glows.' } });

    expect(created.status).toBe(202);
    expect(created.body).toMatchObject({ avatar_id: avatarId, status: 'queued', aspect_ratio: '9:16', video_url: null, credits: 20 });
    expect(created.headers.get('location')).toBe(`/v1/avatar-videos/${created.body.id}`);
    const video = await svc.waitTerminal(`/v1/avatar-videos/${created.body.id}`, key);
    expect(video.status).toBe('ready');
    expect(video.duration_seconds).toBeGreaterThan(0);
    const file = await fetch(video.video_url.replace(svc.config.publicBaseUrl, svc.url));
    expect(file.status).toBe(200);
    expect(file.headers.get('content-type')).toBe('video/mp4');
    expect(Buffer.from(await file.arrayBuffer()).subarray(4, 8).toString()).toBe('ftyp');
  });

  it('fails with an error object and no video_url on the sandbox marker (VID-FAILED-ERROR)', async () => {
    const avatarId = await readyAvatar();
    const created = await svc.request('POST', '/v1/avatar-videos', { key, json: { avatar_id: avatarId, script: 'Oops [sandbox:fail]', aspect_ratio: '16:9' } });

    const video = await svc.waitTerminal(`/v1/avatar-videos/${created.body.id}`, key);

    expect(video).toMatchObject({ status: 'failed', video_url: null, error: { code: 'sandbox_forced_failure' } });
  });

  it('is refused with 409 while the avatar is not ready, and nothing is reserved (AV-READY-BEFORE-VIDEO)', async () => {
    const slow = await startTestService({ env: { ENGINE_AVATAR_MS: '60000' } });
    try {
      const k = (await slow.account()).api_key;
      const avatar = await slow.request('POST', '/v1/avatars', { key: k, json: promptAvatar() });
      const before = await slow.request('GET', '/v1/me', { key: k });

      const r = await slow.request('POST', '/v1/avatar-videos', { key: k, json: { avatar_id: avatar.body.id, script: 'Hello' } });

      expect(r.status).toBe(409);
      expect(r.body.code).toBe('avatar_not_ready');
      expect(r.body.errors).toContainEqual(expect.objectContaining({ field: 'avatar_id' }));
      const after = await slow.request('GET', '/v1/me', { key: k });
      expect(after.body.credits).toEqual(before.body.credits);
    } finally {
      await slow.dispose();
    }
  });

  it('is refused with 409 from a failed avatar', async () => {
    const created = await svc.request('POST', '/v1/avatars', { key, json: promptAvatar({ name: 'x [sandbox:fail]' }) });
    await svc.waitTerminal(`/v1/avatars/${created.body.id}`, key);

    const r = await svc.request('POST', '/v1/avatar-videos', { key, json: { avatar_id: created.body.id, script: 'Hello' } });

    expect(r.status).toBe(409);
  });

  it("is refused with 404 from another account's avatar or an unknown one", async () => {
    const avatarId = await readyAvatar();

    const theirs = await svc.request('POST', '/v1/avatar-videos', { key: otherKey, json: { avatar_id: avatarId, script: 'Hello' } });
    const unknown = await svc.request('POST', '/v1/avatar-videos', { key, json: { avatar_id: 'av_000000000000000000000000', script: 'Hello' } });

    for (const r of [theirs, unknown]) {
      expect(r.status).toBe(404);
      expect(r.body.errors).toContainEqual({ field: 'avatar_id', rule: 'exists', message: expect.any(String) });
    }
  });

  it.each([
    ['avatar_id missing', { script: 'Hi' }, 'avatar_id', 'required'],
    ['script missing', { avatar_id: 'av_x' }, 'script', 'required'],
    ['script empty', { avatar_id: 'av_x', script: '' }, 'script', 'minLength'],
    ['script too long', { avatar_id: 'av_x', script: 'a'.repeat(5001) }, 'script', 'maxLength'],
    ['aspect ratio unknown', { avatar_id: 'av_x', script: 'Hi', aspect_ratio: '4:3' }, 'aspect_ratio', 'enum'],
    ['an unknown member', { avatar_id: 'av_x', script: 'Hi', voice: 'x' }, 'voice', 'not_allowed'],
  ])('is refused with 422 when %s', async (_case, body, field, rule) => {
    const r = await svc.request('POST', '/v1/avatar-videos', { key, json: body });

    expect(r.status).toBe(422);
    expect(r.body.errors).toContainEqual(expect.objectContaining({ field, rule }));
  });

  it("answers 404 for another account's video", async () => {
    const avatarId = await readyAvatar();
    const created = await svc.request('POST', '/v1/avatar-videos', { key, json: { avatar_id: avatarId, script: 'Hello' } });

    const r = await svc.request('GET', `/v1/avatar-videos/${created.body.id}`, { key: otherKey });

    expect(r.status).toBe(404);
  });
});

describe('files', () => {
  it('serves nothing for a job that is not ready or a wrong file name', async () => {
    const failed = await svc.request('POST', '/v1/avatars', { key, json: promptAvatar({ name: 'x [sandbox:fail]' }) });
    await svc.waitTerminal(`/v1/avatars/${failed.body.id}`, key);
    const ready = await readyAvatar();

    expect((await fetch(`${svc.url}/files/${failed.body.id}/preview.png`)).status).toBe(404);
    expect((await fetch(`${svc.url}/files/${ready}/video.mp4`)).status).toBe(404);
  });
});
