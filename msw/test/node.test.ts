// The package as a front-end team uses it in unit tests (msw/node): the typed client
// against the sandbox's handlers, no server process. Every answer the client got is
// held to the contract by the conformance runner's own validator.
import { setupServer } from 'msw/node';
import { PNG } from 'pngjs';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createAvatarClient } from '../../client/src/index.ts';
import { FILE_LINKS } from '../../contract/numbers.ts';
import { loadBundle } from '../../contract/schemas.ts';
import { contractViolations } from '../../server/test/support/contractViolations.ts';
import { createSandbox, type MockedService } from '../src/index.ts';

const BASE_URL = 'http://127.0.0.1:8080';
/** A minute's first instant: every create of a test falls in one rate-limit window. */
const START = Date.UTC(2026, 10, 26, 12, 0, 0);

const server = setupServer();
beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
afterEach(() => {
  server.resetHandlers();
  vi.useRealTimers();
});
afterAll(() => server.close());

/** Every answer a client got, with what the contract says of it. */
const violations: string[] = [];
let answers = 0;
afterEach(() => {
  expect(violations).toEqual([]);
  violations.length = 0;
});

async function recorded(request: Request): Promise<Response> {
  const response = await fetch(request);
  const text = await response.clone().text();
  const url = new URL(request.url);
  answers++;
  violations.push(
    ...contractViolations({
      method: request.method,
      path: url.pathname + url.search,
      status: response.status,
      headers: response.headers,
      text,
      body: text && (response.headers.get('content-type') ?? '').includes('json') ? JSON.parse(text) : undefined,
    }),
  );
  return response;
}

function mocked(options: Parameters<typeof createSandbox>[0] = {}): MockedService {
  const sandbox = createSandbox({ baseUrl: BASE_URL, startAt: START, ...options });
  server.use(...sandbox.handlers);
  return sandbox;
}

const clientFor = (apiKey: string) => createAvatarClient({ baseUrl: BASE_URL, apiKey, retry: false, fetch: recorded });

describe('the handlers', () => {
  it('answer every operation of the contract, each with a handler of its own', () => {
    const bundle = loadBundle() as { paths: Record<string, Record<string, { operationId?: string }>> };
    const operations = Object.entries(bundle.paths).flatMap(([path, item]) =>
      Object.entries(item)
        .filter(([, op]) => typeof op?.operationId === 'string')
        .map(([method]) => `${method.toUpperCase()} ${BASE_URL}${path.replace(/\{(\w+)\}/g, ':$1')}`),
    );
    const handled = createSandbox({ baseUrl: BASE_URL }).handlers.map((h) => `${String(h.info.method)} ${String(h.info.path)}`);

    expect(operations.length).toBeGreaterThanOrEqual(12);
    expect(handled.filter((h) => operations.includes(h)).sort()).toEqual([...operations].sort());
  });
});

describe('the sandbox in msw/node, through the typed client', () => {
  it('takes an avatar from queued to ready, makes a video of it, and refuses a create the credits do not cover (402)', async () => {
    const sandbox = mocked();
    const { apiKey } = await sandbox.createAccount({ credits: 50 });
    const client = clientFor(apiKey);

    const created = await client.createAvatar({ type: 'prompt', name: 'Ada', prompt: 'A friendly presenter' });
    expect(created.response.status).toBe(202);
    expect(created.data!.status).toBe('queued');
    const id = created.data!.id;
    expect((await client.getAvatar(id)).data!.status).toBe('queued');
    await sandbox.clock.advance(1_000);
    expect((await client.getAvatar(id)).data!.status).toBe('processing');
    await sandbox.clock.advance(4_000);
    const ready = await client.getAvatar(id);
    expect(ready.data!.status).toBe('ready');

    const video = await client.createAvatarVideo({ avatar_id: id, script: 'Hello from the sandbox.' });
    expect(video.response.status).toBe(202);
    await sandbox.clock.advance(10_000);
    const made = await client.getAvatarVideo(video.data!.id);
    expect(made.data).toMatchObject({ status: 'ready' });
    expect(made.data!.duration_seconds).toBeGreaterThan(0);

    // 50 credits: 10 for the avatar, 20 for the video, 20 reserved by the next video.
    expect((await client.createAvatarVideo({ avatar_id: id, script: 'Another one.' })).response.status).toBe(202);
    const refused = await client.createAvatar({ type: 'prompt', name: 'Bo', prompt: 'Too many' });
    expect(refused.response.status).toBe(402);
    expect(refused.error).toMatchObject({ code: 'insufficient_credits', credits_required: 10, credits_available: 0 });
    const me = await client.getMe();
    expect(me.data!.credits).toMatchObject({ used: 30, reserved: 20, available: 0 });
    expect((await client.listAvatars()).data!.data).toHaveLength(1);
  });

  it('answers the 11th create of a minute 429 with the rate-limit headers and Retry-After', async () => {
    const sandbox = mocked({ startAt: START + 45_000 });
    const client = clientFor((await sandbox.createAccount()).apiKey);

    for (let i = 1; i <= 10; i++) {
      const ok = await client.createAvatar({ type: 'prompt', name: `Avatar ${i}`, prompt: 'x' });
      expect(ok.response.status).toBe(202);
      expect(ok.response.headers.get('RateLimit-Remaining')).toBe(String(10 - i));
    }
    const limited = await client.createAvatar({ type: 'prompt', name: 'Eleventh', prompt: 'x' });

    expect(limited.response.status).toBe(429);
    expect(limited.error).toMatchObject({ code: 'rate_limit_exceeded', retry_after: 15 });
    expect(limited.response.headers.get('Retry-After')).toBe('15');
    expect(limited.response.headers.get('RateLimit-Limit')).toBe('10');
    expect(limited.response.headers.get('RateLimit-Remaining')).toBe('0');
    expect(limited.response.headers.get('RateLimit-Reset')).toBe('15');
    expect(limited.response.headers.get('X-RateLimit-Reset')).toBe('15');
    expect(limited.response.headers.get('RateLimit-Policy')).toBe('"minute";q=10;w=60, "day";q=300;w=86400');
    expect(limited.response.headers.get('RateLimit')).toBe('"minute";r=0;t=15');
    // The next minute has room again: the window is the service's own, on the moved clock.
    await sandbox.clock.advance(15_000);
    expect((await client.createAvatar({ type: 'prompt', name: 'Next minute', prompt: 'x' })).response.status).toBe(202);
  });

  it('replays a create sent again with its idempotency key, and refuses the key for another body', async () => {
    const sandbox = mocked();
    const client = clientFor((await sandbox.createAccount({ credits: 10 })).apiKey);

    const first = await client.createAvatar({ type: 'prompt', name: 'Once', prompt: 'x' }, { idempotencyKey: 'order-1' });
    const again = await client.createAvatar({ type: 'prompt', name: 'Once', prompt: 'x' }, { idempotencyKey: 'order-1' });
    const other = await client.createAvatar({ type: 'prompt', name: 'Twice', prompt: 'x' }, { idempotencyKey: 'order-1' });

    expect(again.response.status).toBe(202);
    expect(again.response.headers.get('Idempotent-Replayed')).toBe('true');
    expect(again.data!.id).toBe(first.data!.id);
    expect(other.response.status).toBe(409);
    expect(other.error).toMatchObject({ code: 'idempotency_key_reused' });
    expect((await client.getMe()).data!.credits).toMatchObject({ reserved: 10 });
  });

  it('pages a list with next_cursor, seeds ready avatars and fails the job it was told to', async () => {
    const sandbox = mocked();
    const account = await sandbox.createAccount();
    const client = clientFor(account.apiKey);
    const seeded = await sandbox.seedReadyAvatars(account, ['Ann', 'Ben', 'Cy']);
    expect(seeded.map((a) => a.status)).toEqual(['ready', 'ready', 'ready']);

    const first = await client.listAvatars({ limit: 2 });
    expect(first.data!.data.map((a) => a.name)).toEqual(['Cy', 'Ben']);
    const second = await client.listAvatars({ limit: 2, cursor: first.data!.next_cursor! });
    expect(second.data!.data.map((a) => a.name)).toEqual(['Ann']);
    expect(second.data!.has_more).toBe(false);

    sandbox.failNextJob();
    const doomed = await client.createAvatarVideo({ avatar_id: seeded[0]!.id, script: 'This one fails.' });
    await sandbox.clock.advance(10_000);
    expect((await client.getAvatarVideo(doomed.data!.id)).data).toMatchObject({ status: 'failed', error: { code: 'sandbox_forced_failure' } });
    // A failed job releases its credits: 30 for three avatars, nothing for the video.
    expect((await client.getMe()).data!.credits).toMatchObject({ used: 30, reserved: 0 });
  });

  it('moves a job on when the contract’s sandbox clock is advanced, and takes the time a test asked of a job', async () => {
    const sandbox = mocked();
    const client = clientFor((await sandbox.createAccount()).apiKey);

    sandbox.nextJobTakes(3600);
    const slow = await client.createAvatar({ type: 'prompt', name: 'Slow', prompt: 'x' });
    await sandbox.clock.advance(60_000);
    expect((await client.getAvatar(slow.data!.id)).data!.status).toBe('processing');
    const moved = await client.advanceSandboxClock({ seconds: 3600 });
    expect(moved.data!.offset_seconds).toBe(3600);
    expect((await client.getAvatar(slow.data!.id)).data!.status).toBe('ready');
  });

  it('follows fake timers: a polling wait ends as soon as the test moves the system time', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(START);
    const sandbox = createSandbox({ baseUrl: BASE_URL });
    server.use(...sandbox.handlers);
    const client = clientFor((await sandbox.createAccount()).apiKey);

    const created = await client.createAvatar({ type: 'prompt', name: 'Timed', prompt: 'x' });
    vi.setSystemTime(START + 5_000);
    expect((await client.getAvatar(created.data!.id)).data!.status).toBe('ready');
  });

  it('serves a ready avatar’s preview as a PNG a page can show, and a ready video’s captions; nothing for a job not ready', async () => {
    const sandbox = mocked();
    const account = await sandbox.createAccount();
    const client = clientFor(account.apiKey);
    const [avatar] = await sandbox.seedReadyAvatars(account, ['Ann']);
    const video = await client.createAvatarVideo({ avatar_id: avatar!.id, script: 'Hello there. This is the sandbox.' });

    const preview = await fetch(avatar!.preview_image_url!);
    const png = PNG.sync.read(Buffer.from(await preview.arrayBuffer()));
    const early = await fetch(`${BASE_URL}/files/${video.data!.id}/captions.vtt`);
    await sandbox.clock.advance(10_000);
    const ready = (await client.getAvatarVideo(video.data!.id)).data!;
    const captions = await fetch(ready.captions_url!);

    expect(preview.headers.get('content-type')).toBe('image/png');
    expect([png.width, png.height]).toEqual([64, 64]);
    expect(early.status).toBe(404);
    expect(captions.headers.get('content-type')).toBe('text/vtt; charset=utf-8');
    expect(await captions.text()).toMatch(/^WEBVTT\n[\s\S]*Hello there\./);
  });

  it('when the delivery log is read after the clock passed a link’s lifetime, then its event’s file link is signed at the read and downloads', async () => {
    const sandbox = mocked();
    const client = clientFor((await sandbox.createAccount()).apiKey);
    await client.createAvatar({ type: 'prompt', name: 'Ada', prompt: 'A friendly presenter', webhook_url: 'http://127.0.0.1:9/hook' });
    await sandbox.clock.advance(10_000);
    await sandbox.clock.advance((FILE_LINKS.lifetimeSeconds + 86_400) * 1000);

    const events = [];
    for await (const event of client.eachWebhookEvent()) events.push(event);
    const link = (events[0]!.payload as { data: { object: { preview_image_url: string } } }).data.object.preview_image_url;

    expect(events.map((e) => e.type)).toEqual(['avatar.ready']);
    expect(Number(new URL(link).searchParams.get('expires')) * 1000).toBeGreaterThan(sandbox.clock.now());
    expect((await fetch(link)).status).toBe(200);
  });

  it('refuses a body against the contract as the server does: 422 naming each field and the rule it broke', async () => {
    const sandbox = mocked();
    const client = clientFor((await sandbox.createAccount()).apiKey);

    const refused = await client.createAvatar({ type: 'prompt', name: '' } as never);

    expect(refused.response.status).toBe(422);
    expect(refused.error).toMatchObject({ code: 'validation_failed' });
    expect(refused.error!.errors).toEqual(
      expect.arrayContaining([expect.objectContaining({ field: 'prompt', rule: 'required' }), expect.objectContaining({ field: 'name', rule: 'minLength' })]),
    );
    expect((await client.getMe()).data!.credits).toMatchObject({ reserved: 0 });
  });

  it('answers an unknown key 401 and an unknown route 404 as problems', async () => {
    const sandbox = mocked();
    await sandbox.createAccount();
    const stranger = clientFor('sk_test_not-a-key-of-this-sandbox');
    const refused = await stranger.getMe();
    expect(refused.response.status).toBe(401);
    expect(refused.response.headers.get('WWW-Authenticate')).toContain('Bearer');
    const missing = await recorded(new Request(`${BASE_URL}/v1/nothing-here`));
    expect(missing.status).toBe(404);
    expect(answers).toBeGreaterThan(0);
  });
});
