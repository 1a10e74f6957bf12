// File links that expire (ND-FILE-LINKS): a read of a record gives links valid for the
// contract's lifetime on the account's time; once the sandbox clock passes it the old link
// answers 403 file_link_expired, and a new read gives a link that answers 200. An altered
// link answers 403 file_link_invalid, whatever file it names.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FILE_LINKS } from '../../../contract/numbers.ts';
import type { GenerationEngine } from '../../src/domain/engine.ts';
import { fileLinkSigner, refuseExpired, verifyFileLink } from '../../src/domain/fileLinks.ts';
import { createEmbeddedStore } from '../../src/storage/embedded/index.ts';
import { fakeClock } from '../support/clock.ts';
import { GENEROUS_PLAN, promptAvatar, startTestService, type TestService } from '../support/harness.ts';

const KEY = 'a-file-link-key-for-this-test-only-0123';
const LIFETIME_MS = FILE_LINKS.lifetimeSeconds * 1000;

describe('a signed link', () => {
  const path = '/files/vid_abc/video.mp4';
  const signed = new URL(fileLinkSigner(KEY, Date.UTC(2026, 10, 2)).url(`https://api.example.com${path}`));

  it('carries its expiry, the lifetime from the account time it was made at, and verifies under the key', () => {
    expect(Number(signed.searchParams.get('expires')) * 1000).toBe(Date.UTC(2026, 10, 2) + LIFETIME_MS);
    expect(verifyFileLink(KEY, path, signed.searchParams)).toEqual({ signed: true, expiresAtMs: Date.UTC(2026, 10, 2) + LIFETIME_MS });
  });

  it.each([
    ['another key', 'another-key-for-this-test-only-0123456', path, (q: URLSearchParams) => q],
    ['another file of the job', KEY, '/files/vid_abc/captions.vtt', (q: URLSearchParams) => q],
    ['a later expiry', KEY, path, (q: URLSearchParams) => new URLSearchParams({ expires: String(Number(q.get('expires')) + 1), signature: q.get('signature')! })],
    ['no signature', KEY, path, (q: URLSearchParams) => new URLSearchParams({ expires: q.get('expires')! })],
    ['no expiry', KEY, path, (q: URLSearchParams) => new URLSearchParams({ signature: q.get('signature')! })],
  ])('is refused as invalid under %s', (_, key, at, change) => {
    expect(() => verifyFileLink(key, at, change(new URLSearchParams(signed.search)))).toThrow(expect.objectContaining({ code: 'file_link_invalid' }));
  });

  it('expires on the account time, and an unsigned one when the grace ends on the service time', () => {
    const claim = verifyFileLink(KEY, path, signed.searchParams);
    expect(() => refuseExpired(claim, Date.UTC(2026, 10, 2) + LIFETIME_MS - 1, 0)).not.toThrow();
    expect(() => refuseExpired(claim, Date.UTC(2026, 10, 2) + LIFETIME_MS, 0)).toThrow(expect.objectContaining({ code: 'file_link_expired' }));
    const unsigned = verifyFileLink(KEY, path, new URLSearchParams());
    expect(() => refuseExpired(unsigned, Number.MAX_SAFE_INTEGER, FILE_LINKS.unsignedUntilMs - 1)).not.toThrow();
    expect(() => refuseExpired(unsigned, 0, FILE_LINKS.unsignedUntilMs)).toThrow(expect.objectContaining({ code: 'file_link_expired' }));
  });

  it('leaves a member that only looks like a link alone in a record', () => {
    const json = JSON.stringify({ video_url: `https://x.test${path}`, webhook_url: `https://x.test${path}`, script: `"video_url":"https://x.test${path}"` });
    const out = JSON.parse(fileLinkSigner(KEY, 0).json(json));
    expect(out.video_url).toMatch(/\?expires=\d+&signature=/u);
    expect(out.webhook_url).toBe(`https://x.test${path}`);
    expect(out.script).toBe(`"video_url":"https://x.test${path}"`);
  });
});

describe('the embedded store keeps one link key', () => {
  it('the first candidate, for every later start', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'link-key-'));
    try {
      for (const [candidate, kept] of [['first-candidate', 'first-candidate'], ['second-candidate', 'first-candidate']]) {
        const store = createEmbeddedStore(join(dir, 'store.db'));
        try {
          expect(await store.files.linkKey(candidate!)).toBe(kept);
        } finally {
          await store.close();
        }
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

const clock = fakeClock(Date.UTC(2026, 10, 2, 9, 0, 0));
let svc: TestService;
let key: string;

const engine: GenerationEngine = {
  generate: async () => ({ status: 'ready', result: { duration_seconds: 1 } }),
  artifact: async () => ({ contentType: 'video/mp4', body: new Uint8Array(64) }),
};

beforeAll(async () => {
  svc = await startTestService({ engine, clock });
  key = (await svc.account({ plan: GENEROUS_PLAN, credits: 100_000 })).api_key;
});
afterAll(() => svc?.dispose());

const local = (url: string) => url.replace(svc.config.publicBaseUrl, svc.url);

async function readyVideo(): Promise<{ id: string; video_url: string; captions_url: string }> {
  const avatar = await svc.request('POST', '/v1/avatars', { key, json: promptAvatar() });
  await svc.waitTerminal(`/v1/avatars/${avatar.body.id}`, key);
  const video = await svc.request('POST', '/v1/avatar-videos', { key, json: { avatar_id: avatar.body.id, script: 'Hello there.' } });
  return svc.waitTerminal(`/v1/avatar-videos/${video.body.id}`, key);
}

describe('a video link read from the service', () => {
  it('after the sandbox clock moves past the lifetime, the old video_url answers a problem, and a new read gives a link that answers 200', async () => {
    const video = await readyVideo();
    const old = local(video.video_url);
    const first = await fetch(old);
    expect(first.status).toBe(200);
    expect(Number(first.headers.get('cache-control')?.match(/max-age=(\d+)/u)?.[1])).toBeLessThanOrEqual(FILE_LINKS.lifetimeSeconds);

    const moved = await svc.request('POST', '/v1/test_helpers/clock/advance', { key, json: { seconds: FILE_LINKS.lifetimeSeconds } });
    expect(moved.status).toBe(200);
    const expired = await fetch(old);
    expect(expired.status).toBe(403);
    expect(expired.headers.get('content-type')).toContain('application/problem+json');
    expect(((await expired.json()) as { code: string }).code).toBe('file_link_expired');

    const again = await svc.request('GET', `/v1/avatar-videos/${video.id}`, { key });
    expect(again.body.video_url).not.toBe(video.video_url);
    expect((await fetch(local(again.body.video_url))).status).toBe(200);
    expect((await fetch(local(again.body.captions_url))).status).toBe(200);
  });

  it('altered, answers 403 file_link_invalid, for a file that exists or not', async () => {
    const video = await readyVideo();
    const url = new URL(local(video.video_url));
    // Its last character changed: to another one, whatever it was (one signature in 64 ends in A).
    const signature = url.searchParams.get('signature')!;
    url.searchParams.set('signature', `${signature.slice(0, -1)}${signature.endsWith('A') ? 'B' : 'A'}`);
    const tampered = await fetch(url);
    expect(tampered.status).toBe(403);
    expect(((await tampered.json()) as { code: string }).code).toBe('file_link_invalid');
    const elsewhere = new URL(local(video.video_url).replace(video.id, 'vid_000000000aaaaaaaaaaaaaaaaaaaaaaaa'));
    expect((await fetch(elsewhere)).status).toBe(403);
  });

  it('in a list, is signed as in a read', async () => {
    const list = await svc.request('GET', '/v1/avatar-videos?limit=1', { key });
    expect(list.body.data[0].video_url).toMatch(/\?expires=\d+&signature=[\w-]+$/u);
  });

  it('without expires and signature, as made before links were signed, is served until the grace ends, and then answers file_link_expired', async () => {
    const video = await readyVideo();
    const unsigned = local(video.video_url).split('?')[0]!;
    expect((await fetch(unsigned)).status).toBe(200);
    clock.set(FILE_LINKS.unsignedUntilMs);
    const late = await fetch(unsigned);
    expect(late.status).toBe(403);
    expect(((await late.json()) as { code: string }).code).toBe('file_link_expired');
  });
});
