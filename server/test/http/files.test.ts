// The files route sends what the engine makes: a byte range when one is asked for (how a
// player seeks), the whole file otherwise. When the engine cannot make a file, the client
// gets a problem, 503 with Retry-After when the engine is only busy, 500 when it is
// broken, and the server goes on answering.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ArtifactUnavailableError, type GenerationEngine } from '../../src/domain/engine.ts';
import { byteRange, rangeApplies } from '../../src/http/files.ts';
import { GENEROUS_PLAN, promptAvatar, startTestService, type TestService } from '../support/harness.ts';

describe('the byte range a Range header asks for', () => {
  it.each([
    ['bytes=0-99', { start: 0, end: 99 }],
    ['bytes=100-', { start: 100, end: 999 }],
    ['bytes=-100', { start: 900, end: 999 }],
    ['bytes=990-2000', { start: 990, end: 999 }],
    ['bytes=-5000', { start: 0, end: 999 }],
  ])('%s of 1,000 bytes', (header, range) => {
    expect(byteRange(header, 1000)).toEqual(range);
  });

  it.each([undefined, '', 'bytes=1000-', 'bytes=5-4', 'bytes=-0', 'bytes=0-1,5-9', 'items=0-1', 'bytes=a-b', 'bytes=-'])('none (the whole file) for %s', (header) => {
    expect(byteRange(header, 1000)).toBeNull();
  });
});

describe('whether If-Range lets a range be sent (RFC 9110, section 13.1.5)', () => {
  const etag = '"abc"';
  it.each([
    ['no If-Range', undefined, true],
    ['the current entity tag', '"abc"', true],
    ['another entity tag', '"abd"', false],
    ['the current tag, weak', 'W/"abc"', false],
    ['a date (this server sends no Last-Modified)', 'Sat, 28 Nov 2026 02:00:00 GMT', false],
    ['the tag unquoted', 'abc', false],
  ])('%s: %s', (_, ifRange, applies) => {
    expect(rangeApplies(ifRange, etag)).toBe(applies);
  });
});

let svc: TestService;
let key: string;
let failure: ArtifactUnavailableError | null = null;

const engine: GenerationEngine = {
  generate: async () => ({ status: 'ready', result: {} }),
  artifact: async () => {
    if (failure) throw failure;
    return { contentType: 'image/png', body: new Uint8Array(Array.from({ length: 256 }, (_, i) => i)) };
  },
};

beforeAll(async () => {
  svc = await startTestService({ engine });
  key = (await svc.account({ plan: GENEROUS_PLAN, credits: 100_000 })).api_key;
});
afterAll(() => svc?.dispose());

async function readyAvatarFile(): Promise<string> {
  const created = await svc.request('POST', '/v1/avatars', { key, json: promptAvatar() });
  const avatar = await svc.waitTerminal(`/v1/avatars/${created.body.id}`, key);
  return avatar.preview_image_url.replace(svc.config.publicBaseUrl, svc.url);
}

describe('a job file', () => {
  it('is sent whole, or the range asked for with 206 and Content-Range', async () => {
    const url = await readyAvatarFile();
    const whole = await fetch(url);
    const part = await fetch(url, { headers: { Range: 'bytes=16-31' } });

    expect(whole.status).toBe(200);
    expect(whole.headers.get('accept-ranges')).toBe('bytes');
    expect((await whole.arrayBuffer()).byteLength).toBe(256);
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe('bytes 16-31/256');
    expect([...new Uint8Array(await part.arrayBuffer())]).toEqual(Array.from({ length: 16 }, (_, i) => 16 + i));
  });

  it('with If-Range, sends the range only of the file the validator names, the whole file otherwise', async () => {
    const url = await readyAvatarFile();
    const whole = await fetch(url);
    const etag = whole.headers.get('etag')!;
    const ranged = (ifRange: string) => fetch(url, { headers: { Range: 'bytes=16-31', 'If-Range': ifRange } });
    const [same, other, weak, date] = await Promise.all([ranged(etag), ranged('"another"'), ranged(`W/${etag}`), ranged(new Date().toUTCString())]);

    expect(etag).toMatch(/^"[\w-]+"$/u);
    expect(same.status).toBe(206);
    expect(same.headers.get('content-range')).toBe('bytes 16-31/256');
    expect((await same.arrayBuffer()).byteLength).toBe(16);
    for (const answer of [other, weak, date]) {
      expect(answer.status).toBe(200);
      expect(answer.headers.get('content-range')).toBeNull();
      expect((await answer.arrayBuffer()).byteLength).toBe(256);
    }
  });

  it('the engine cannot make answers a problem, 503 with Retry-After while it is busy and 500 when it is broken, and the server answers on', async () => {
    const url = await readyAvatarFile();
    try {
      failure = new ArtifactUnavailableError('16 videos are being rendered already', { retryable: true });
      const busy = await fetch(url);
      failure = new ArtifactUnavailableError('the video could not be rendered: FFmpeg exited 1: no such filter');
      const broken = await fetch(url);

      expect(busy.status).toBe(503);
      expect(busy.headers.get('retry-after')).toBe('5');
      expect(((await busy.json()) as { code: string }).code).toBe('service_unavailable');
      expect(broken.status).toBe(500);
      expect(broken.headers.get('content-type')).toBe('application/problem+json');
      const problem = (await broken.json()) as { code: string; detail: string; request_id: string };
      expect(problem.code).toBe('internal_error');
      expect(problem.detail).not.toContain('FFmpeg'); // the reason is the operator's, in the log
      expect(problem.request_id).toBe(broken.headers.get('x-request-id'));
    } finally {
      failure = null;
    }
    expect((await fetch(url)).status).toBe(200);
  });
});
