// POST /v1/avatars: validation (AV-*), the immediate answer (AV-ASYNC) and the request
// errors of ND-ERRORS, each answered as problem+json naming the field and the rule.
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GENEROUS_PLAN, promptAvatar, startTestService, type TestService } from '../support/harness.ts';

let svc: TestService;
let key: string;

beforeAll(async () => {
  svc = await startTestService({ env: { ENGINE_AVATAR_MS: '60000' } });
  key = (await svc.account({ plan: GENEROUS_PLAN, credits: 100_000 })).api_key;
});
afterAll(() => svc.dispose());

describe('a valid request (AV-ASYNC)', () => {
  it.each([
    ['prompt', promptAvatar()],
    ['photo', { type: 'photo', name: 'Daniel', file: { type: 'url', url: 'https://cdn.example.com/daniel.jpg' } }],
    ['props', { type: 'props', name: 'Coach', ethnicity: 'Middle Eastern', sex: 'male', age: 20 }],
  ])('of type %s answers 202 with the queued record and its Location at once', async (_type, body) => {
    const r = await svc.request('POST', '/v1/avatars', { key, json: body });

    expect(r.status).toBe(202);
    expect(r.body.id).toMatch(/^av_[a-z0-9]{33}$/);
    expect(r.body.status).toBe('queued'); // the engine takes a minute: the answer did not wait for it
    expect(r.headers.get('location')).toBe(`/v1/avatars/${r.body.id}`);
    expect(r.body).toMatchObject({ ...body, object: 'avatar', credits: 10, error: null, preview_image_url: null });
  });
});

// [case, body, field, rule] - one row per rule of the create request.
const invalid: [string, unknown, string, string][] = [
  ['type missing (AV-TYPES)', { name: 'x', prompt: 'p' }, 'type', 'required'],
  ['type unknown (AV-TYPES)', { type: 'video', name: 'x', prompt: 'p' }, 'type', 'enum'],
  ['name missing (AV-NAME)', { type: 'prompt', prompt: 'p' }, 'name', 'required'],
  ['name empty (AV-NAME)', { type: 'prompt', name: '', prompt: 'p' }, 'name', 'minLength'],
  ['prompt missing (AV-PROMPT)', { type: 'prompt', name: 'x' }, 'prompt', 'required'],
  ['file missing (AV-PHOTO)', { type: 'photo', name: 'x' }, 'file', 'required'],
  ['file.type not url (AV-PHOTO)', { type: 'photo', name: 'x', file: { type: 'upload', url: 'https://a.example/p.jpg' } }, 'file.type', 'const'],
  ['file.url missing (AV-PHOTO)', { type: 'photo', name: 'x', file: { type: 'url' } }, 'file.url', 'required'],
  ['file not an object (AV-PHOTO)', { type: 'photo', name: 'x', file: 'https://a.example/p.jpg' }, 'file', 'type'],
  ['file.url not a URL (AV-PHOTO)', { type: 'photo', name: 'x', file: { type: 'url', url: 'not a url' } }, 'file.url', 'format'],
  ['ethnicity missing (AV-PROPS)', { type: 'props', name: 'x', sex: 'male', age: 30 }, 'ethnicity', 'required'],
  ['ethnicity unknown (AV-PROPS)', { type: 'props', name: 'x', ethnicity: 'Martian', sex: 'male', age: 30 }, 'ethnicity', 'enum'],
  ['sex missing (AV-PROPS)', { type: 'props', name: 'x', ethnicity: 'White', age: 30 }, 'sex', 'required'],
  ['sex unknown (AV-PROPS)', { type: 'props', name: 'x', ethnicity: 'White', sex: 'other', age: 30 }, 'sex', 'enum'],
  ['age missing (AV-PROPS)', { type: 'props', name: 'x', ethnicity: 'White', sex: 'female' }, 'age', 'required'],
  ['age 19 (AV-AGE)', { type: 'props', name: 'x', ethnicity: 'White', sex: 'female', age: 19 }, 'age', 'minimum'],
  ['age not an integer (AV-AGE)', { type: 'props', name: 'x', ethnicity: 'White', sex: 'female', age: 20.5 }, 'age', 'type'],
  ['age as a string (AV-AGE)', { type: 'props', name: 'x', ethnicity: 'White', sex: 'female', age: '30' }, 'age', 'type'],
  ['a member of another type', { type: 'prompt', name: 'x', prompt: 'p', age: 30 }, 'age', 'not_allowed'],
  ['an unknown member', { ...promptAvatar(), colour: 'red' }, 'colour', 'not_allowed'],
  ['webhook_url not a URL (WH-OPTIONAL)', promptAvatar({ webhook_url: 'hooks' }), 'webhook_url', 'format'],
  ['webhook_url with another scheme', promptAvatar({ webhook_url: 'ftp://hooks.example.com/x' }), 'webhook_url', 'https_required'],
  ['a body that is not an object', [promptAvatar()], '', 'type'],
];

describe('an invalid body', () => {
  it.each(invalid)('%s: 422 validation_failed naming the field and the rule', async (_case, body, field, rule) => {
    const before = await svc.activeJobs();

    const r = await svc.request('POST', '/v1/avatars', { key, json: body });

    expect(r.status).toBe(422);
    expect(r.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(r.body.code).toBe('validation_failed');
    expect(r.body.errors).toContainEqual(expect.objectContaining({ field, rule }));
    expect(await svc.activeJobs()).toBe(before);
  });

  it('file.type not url: one error, the const it breaks, though an enum restates it for tools that read only enum', async () => {
    const r = await svc.request('POST', '/v1/avatars', { key, json: { type: 'photo', name: 'x', file: { type: 'upload', url: 'https://a.example/p.jpg' } } });

    expect(r.status).toBe(422);
    expect(r.body.errors).toEqual([{ field: 'file.type', rule: 'const', message: 'must be "url"' }]);
  });

  it.each([
    ['a NUL in the name', promptAvatar({ name: 'Ana\u0000' }), 'name'],
    ['an unpaired surrogate in the prompt', promptAvatar({ prompt: 'A portrait \ud800' }), 'prompt'],
    ['a NUL in a member name', { ...promptAvatar(), 'x\u0000': 1 }, ''],
  ])('%s: 422 with the rule text, the same on every store, and nothing created', async (_case, body, field) => {
    const before = await svc.activeJobs();

    const r = await svc.request('POST', '/v1/avatars', { key, json: body });

    expect(r.status).toBe(422);
    expect(r.body.errors).toContainEqual(expect.objectContaining({ field, rule: 'text' }));
    expect(await svc.activeJobs()).toBe(before);
  });

  // The schema's pattern and the server's own walk find the same string: the answer names
  // the field once, with the rule text, never as a broken regular expression.
  it.each([
    ['POST /v1/avatars', 'name', '/v1/avatars', promptAvatar({ name: 'Ana\u0000' })],
    ['POST /v1/avatars', 'prompt', '/v1/avatars', promptAvatar({ prompt: '\udc00 alone' })],
    ['POST /v1/avatar-videos', 'script', '/v1/avatar-videos', { avatar_id: 'av_x', script: 'Hello\u0000there' }],
    ['POST /v1/avatar-videos', 'avatar_id', '/v1/avatar-videos', { avatar_id: 'av_\u0000', script: 'Hello' }],
  ])('%s with the text rule broken in %s names that field and the rule text, once', async (_operation, field, path, body) => {
    const r = await svc.request('POST', path, { key, json: body });

    expect(r.status).toBe(422);
    expect(r.body.detail).toBe('The request body breaks 1 rule; see errors.');
    expect(r.body.errors).toEqual([{ field, rule: 'text', message: 'must be well-formed Unicode text without U+0000' }]);
  });

  it('lists every broken rule at once', async () => {
    const r = await svc.request('POST', '/v1/avatars', { key, json: { type: 'props', name: 'x', sex: 'robot', age: 3 } });

    expect(r.status).toBe(422);
    const pairs = r.body.errors.map((e: { field: string; rule: string }) => `${e.field}:${e.rule}`);
    expect(pairs).toEqual(expect.arrayContaining(['ethnicity:required', 'sex:enum', 'age:minimum']));
  });
});

describe('a request that is not JSON (ND-ERRORS)', () => {
  it('answers 400 invalid_json for malformed JSON', async () => {
    const r = await svc.request('POST', '/v1/avatars', { key, body: '{"type": "prompt",', headers: { 'Content-Type': 'application/json' } });

    expect(r.status).toBe(400);
    expect(r.body.code).toBe('invalid_json');
  });

  it.each([
    ['a byte that never starts a character', Buffer.from([0xff])],
    ['a character cut short', Buffer.from([0xc3])],
    ['a surrogate written as UTF-8', Buffer.from([0xed, 0xa0, 0x80])],
  ])('answers 400 invalid_json, creating nothing, for a name holding %s', async (_what, bytes) => {
    const before = await svc.request('GET', '/v1/avatars', { key });
    const body = Buffer.concat([Buffer.from('{"type":"prompt","prompt":"a face","name":"x'), bytes, Buffer.from('"}')]);

    const r = await svc.request('POST', '/v1/avatars', { key, body, headers: { 'Content-Type': 'application/json' } });

    expect(r.status).toBe(400);
    expect(r.body.code).toBe('invalid_json');
    expect(r.body.detail).toContain('not UTF-8');
    expect((await svc.request('GET', '/v1/avatars', { key })).body.data).toEqual(before.body.data);
  });

  it.each([['text/plain'], ['application/x-www-form-urlencoded'], ['']])('answers 415 for Content-Type "%s"', async (type) => {
    const headers: Record<string, string> = type ? { 'Content-Type': type } : {};
    const r = await svc.request('POST', '/v1/avatars', { key, body: JSON.stringify(promptAvatar()), headers });

    expect(r.status).toBe(415);
    expect(r.body.code).toBe('unsupported_media_type');
  });

  it('accepts application/json with a charset', async () => {
    const r = await svc.request('POST', '/v1/avatars', { key, body: JSON.stringify(promptAvatar()), headers: { 'Content-Type': 'application/json; charset=utf-8' } });

    expect(r.status).toBe(202);
  });

  it('lists at most 20 broken rules, and says how many there were, however many the body breaks', async () => {
    const unknown = Object.fromEntries(Array.from({ length: 3_000 }, (_, i) => [`member_${i}`, i]));

    const r = await svc.request('POST', '/v1/avatars', { key, json: { ...promptAvatar(), ...unknown } });

    expect(r.status).toBe(422);
    expect(r.body.errors).toHaveLength(20);
    expect(r.body.errors_total).toBe(3_000);
    expect(r.body.detail).toBe('The request body breaks 3000 rules; see errors (the first 20).');
    expect(JSON.stringify(r.body).length).toBeLessThan(4_000);
  });

  it('answers 413 payload_too_large for a body over 64 KiB', async () => {
    const r = await svc.request('POST', '/v1/avatars', { key, json: promptAvatar({ prompt: 'x'.repeat(70_000) }) });

    expect(r.status).toBe(413);
    expect(r.body.code).toBe('payload_too_large');
  });
});

describe('authentication (AUTH-KEY)', () => {
  it.each([
    ['no Authorization header', {}],
    ['an unknown key', { Authorization: 'Bearer sk_test_unknownunknownunknown' }],
    ['another scheme', { Authorization: `Basic ${Buffer.from('a:b').toString('base64')}` }],
  ])('refuses %s with 401 and WWW-Authenticate, before anything else', async (_case, headers) => {
    const r = await svc.request('POST', '/v1/avatars', { json: { not: 'even valid' }, headers });

    expect(r.status).toBe(401);
    expect(r.body.code).toBe('unauthorized');
    expect(r.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect(r.headers.get('ratelimit-limit')).toBeNull();
  });

  it.each(['bearer', 'BEARER', 'BeArEr'])('accepts the scheme spelled %s: HTTP scheme names are case-insensitive', async (scheme) => {
    const r = await svc.request('GET', '/v1/me', { headers: { Authorization: `${scheme} ${key}` } });

    expect(r.status).toBe(200);
  });

  it('refuses a revoked key', async () => {
    const created = await svc.account();
    await svc.store.accounts.revokeKey(created.key_id, Date.now());

    const r = await svc.request('GET', '/v1/me', { key: created.api_key });

    expect(r.status).toBe(401);
  });

  it('never echoes the key it refused', async () => {
    const secretLooking = 'sk_live_thisMustNotBeEchoed1234567890';
    const r = await svc.request('GET', '/v1/me', { key: secretLooking });

    expect(JSON.stringify(r.body)).not.toContain(secretLooking);
  });
});

describe('routing', () => {
  it('answers 404 problem+json for an unknown path', async () => {
    const r = await svc.request('GET', '/v2/avatars', { key });

    expect(r.status).toBe(404);
    expect(r.body.code).toBe('not_found');
  });

  it('answers 405 with Allow for a known path and a wrong method', async () => {
    const r = await svc.request('DELETE', '/v1/avatars', { key });

    expect(r.status).toBe(405);
    expect(r.body.code).toBe('method_not_allowed');
    expect(r.headers.get('allow')).toContain('POST');
  });

  it.each(['TRACE', 'PROPFIND'])('answers %s, a method no route knows, as problem+json 405 with Allow', async (method) => {
    // fetch refuses TRACE: node:http sends anything.
    const reply = await new Promise<{ status: number; type: string; allow: string; body: any }>((resolve, reject) => {
      const req = httpRequest(`${svc.url}/v1/me`, { method, headers: { Authorization: `Bearer ${key}` } }, (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString()));
        res.on('end', () => resolve({ status: res.statusCode!, type: String(res.headers['content-type']), allow: String(res.headers.allow), body: JSON.parse(text) }));
      });
      req.on('error', reject);
      req.end();
    });

    expect(reply.status).toBe(405);
    expect(reply.type).toMatch(/^application\/problem\+json/);
    expect(reply.body.code).toBe('method_not_allowed');
    expect(reply.allow).toContain('GET');
  });

  it('echoes a sane X-Request-Id and replaces an unsafe one', async () => {
    const mine = await svc.request('GET', '/v1/me', { key, headers: { 'X-Request-Id': 'client-trace.42' } });
    const unsafe = await svc.request('GET', '/v1/me', { key, headers: { 'X-Request-Id': 'a b<script>' } });

    expect(mine.headers.get('x-request-id')).toBe('client-trace.42');
    expect(unsafe.headers.get('x-request-id')).toMatch(/^req_[0-9a-f]{16}$/);
  });
});
