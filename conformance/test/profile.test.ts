// The implementation profile: one file says how an implementation made the source's
// "not shown" choices; a broken file is refused with the member and the rule named.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Exchange } from '../src/http.ts';
import { CONTRACT_PROFILE, loadProfile, parseProfile, ProfileError } from '../src/implementation/profile.ts';
import { Shape } from '../src/implementation/shape.ts';

const EXAMPLE = new URL('../examples/independent.profile.yaml', import.meta.url).pathname;

function problems(value: unknown): string[] {
  try {
    parseProfile(value, 'test.yaml');
  } catch (error) {
    if (error instanceof ProfileError) return error.problems;
    throw error;
  }
  return [];
}

function answer(status: number, json: unknown): Exchange {
  return { seq: 1, key: 'main', method: 'GET', path: '/v1/me', requestHeaders: {}, requestBody: undefined, status, responseHeaders: {}, bodyText: JSON.stringify(json), json, startedAt: 0, durationMs: 1, bucket: 'read', retriedAfter429: 0, note: undefined };
}

describe('loading a profile', () => {
  it('when the example profile of the independent implementation is loaded, then every choice it states is read', () => {
    const profile = loadProfile(EXAMPLE);

    expect(profile.isContract).toBe(false);
    expect(profile.auth).toEqual({ header: 'X-Api-Key', scheme: null });
    expect(profile.create.avatar).toEqual({ statuses: [201], id: '/avatar/id', extra: {} });
    expect(profile.create.video.body).toEqual({ avatar: '{{avatar_id}}', text: '{{script}}' });
    expect(profile.records.states).toEqual({ pending: ['PENDING', 'RENDERING'], ready: 'READY', failed: 'FAILED' });
    expect(profile.account).toEqual({ id: '/workspace', credits: null, generationWindows: [], mode: '/key/mode' });
    expect(profile.prices).toEqual({ avatar: 5, avatar_video: 15 });
  });

  it('when the same profile is written as JSON, then it loads the same', () => {
    const dir = mkdtempSync(join(tmpdir(), 'profile-'));
    const file = join(dir, 'p.json');
    writeFileSync(file, JSON.stringify({ profile: 1, auth: { header: 'X-Api-Key', scheme: null } }));

    expect(loadProfile(file).auth).toEqual({ header: 'X-Api-Key', scheme: null });
  });

  it('when a member is left out, then the contract\'s choice stands for it', () => {
    const profile = parseProfile({ profile: 1, records: { states: { ready: 'DONE' } } });

    expect(profile.records.states).toEqual({ ...CONTRACT_PROFILE.records.states, ready: 'DONE' });
    expect(profile.create).toEqual(CONTRACT_PROFILE.create);
  });

  it.each([
    [{ profile: 2 }, 'profile: must be equal to constant (const)'],
    [{ profile: 1, create: { avatar: { statuses: [302] } } }, 'create.avatar.statuses[0]'],
    [{ profile: 1, records: { status: 'state' } }, 'records.status'],
    [{ profile: 1, recrods: {} }, 'recrods: is not a member of the profile format (additionalProperties)'],
    [{ profile: 1, errors: { validation: [] } }, 'errors.validation'],
  ])('when the file breaks a rule (%j), then the problem names the member', (value, expected) => {
    expect(problems(value).join('\n')).toContain(expected);
  });

  it('when a template uses a placeholder that does not belong there, then the problem lists the ones that do', () => {
    const found = problems({ profile: 1, create: { video: { body: { avatar: '{{avatar_id}}', text: '{{prompt}}' } } } });

    expect(found).toEqual(['create.video.body: {{prompt}} is not a placeholder here; use {{avatar_id}}, {{script}}, {{webhook_url}} (placeholder)']);
  });

  it('when the video body never names the avatar, then it is refused', () => {
    expect(problems({ profile: 1, create: { video: { body: { text: '{{script}}' } } } })[0]).toContain('must use {{avatar_id}}');
  });

  it('when a profile names a sandbox clock and a retry schedule, then both are read; a file without them has neither', () => {
    const profile = parseProfile({
      profile: 1,
      clock: { advance: { path: '/sandbox/time', body: { forward_by: '{{seconds}}' } } },
      webhook_retries: { delays_seconds: [10, 60], jitter: 0.1 },
    });
    const shape = new Shape(profile);

    expect(shape.clockAdvance(90)).toEqual({ method: 'POST', path: '/sandbox/time', json: { forward_by: 90 } });
    expect(shape.retries).toEqual({ delaysSeconds: [10, 60], jitter: 0.1 });
    expect(new Shape(parseProfile({ profile: 1 })).clockAdvance(90)).toBeUndefined();
    expect(new Shape(parseProfile({ profile: 1 })).retries).toBeUndefined();
  });

  it.each([
    [{ profile: 1, clock: { advance: { path: '/sandbox/time', body: { by: 60 } } } }, 'clock.advance.body: must use {{seconds}} somewhere'],
    [{ profile: 1, clock: { advance: { path: '/sandbox/time', body: { by: '{{minutes}}' } } } }, 'clock.advance.body: {{minutes}} is not a placeholder here; use {{seconds}}'],
    [{ profile: 1, clock: { advance: { path: 'sandbox/time', body: { by: '{{seconds}}' } } } }, 'clock.advance.path'],
    [{ profile: 1, webhook_retries: { delays_seconds: [] } }, 'webhook_retries.delays_seconds'],
  ])('when the clock or the retry schedule breaks a rule (%j), then the problem names the member', (value, expected) => {
    expect(problems(value).join('\n')).toContain(expected);
  });

  it('when a terminal name is also a pending name, then it is refused', () => {
    expect(problems({ profile: 1, records: { states: { pending: ['DONE'], ready: 'DONE', failed: 'ERR' } } })[0]).toContain('records.states');
  });

  it.each([
    [{ profile: 1, errors: { code: { pointer: 'type', form: 'uri' } } }, 'errors.code.pointer: must match pattern'],
    [{ profile: 1, errors: { code: { pointer: '/type', header: 'X-Error' } } }, 'errors.code: give pointer or header, not both: where the code is (one location)'],
    [{ profile: 1, errors: { code: { form: 'uri' } } }, 'errors.code: give pointer (a member of the body) or header: where the code is (one location)'],
    [{ profile: 1, errors: { code: { pointer: '/type', form: 'url' } } }, 'errors.code.form: must be equal to one of the allowed values (enum)'],
    [{ profile: 1, errors: { code: { pointer: '/type', segment: -1 } } }, 'errors.code.segment: is not a member of the profile format (additionalProperties)'],
    [{ profile: 1, errors: { code: 7 } }, 'errors.code: must be string,object,null (type)'],
    [{ profile: 1, account: { credits: {} } }, 'account.credits: must NOT have fewer than 1 properties (minProperties)'],
    [{ profile: 1, account: { credits: { spent: '/used' } } }, 'account.credits.spent: is not a member of the profile format (additionalProperties)'],
    [{ profile: 1, account: { credits: { used: 'used' } } }, 'account.credits.used: must match pattern'],
  ])('when where the code or the balance is breaks a rule (%j), then the problem names the member and the rule', (value, expected) => {
    const found = problems(value);

    expect(found.join('\n')).toContain(expected);
    // One line per broken rule, without the other branches' noise.
    expect(found).toHaveLength(1);
  });

  it('when the code is placed in each form the format offers, then each is read', () => {
    expect(parseProfile({ profile: 1, errors: { code: '/error/type' } }).errors.code).toEqual({ pointer: '/error/type', form: 'value' });
    expect(parseProfile({ profile: 1, errors: { code: { pointer: '/type', form: 'uri' } } }).errors.code).toEqual({ pointer: '/type', form: 'uri' });
    expect(parseProfile({ profile: 1, errors: { code: { header: 'X-Error-Code' } } }).errors.code).toEqual({ header: 'X-Error-Code', form: 'value' });
    expect(parseProfile({ profile: 1, errors: { code: null } }).errors.code).toBeNull();
    expect(parseProfile({ profile: 1, account: { credits: { available: '/balance' } } }).account.credits).toEqual({ available: '/balance' });
  });

  it('when the file is not YAML, then the error says so and names the file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'profile-'));
    const file = join(dir, 'broken.yaml');
    writeFileSync(file, 'profile: [1\n');

    expect(() => loadProfile(file)).toThrow(/broken\.yaml is not a valid implementation profile: is neither YAML nor JSON/);
  });
});

describe('reading through a profile', () => {
  const shape = new Shape(loadProfile(EXAMPLE));

  it('when a video request is built, then the template spells it and webhook_url is added as the source names it', () => {
    expect(shape.videoBody('ava-1', 'Hello', { webhookUrl: 'http://127.0.0.1:1/h' })).toEqual({ avatar: 'ava-1', text: 'Hello', webhook_url: 'http://127.0.0.1:1/h' });
    expect(shape.videoBody('ava-1', 'Hello', { fail: true })).toEqual({ avatar: 'ava-1', text: 'FAIL Hello' });
  });

  it('when records are read, then the state is found at its pointer and the terminal names are mapped to the source\'s', () => {
    expect(shape.createdId('avatar', { avatar: { id: 'ava-1' } })).toBe('ava-1');
    expect(shape.state({ state: 'READY' })).toBe('READY');
    expect(shape.terminal('READY')).toBe('ready');
    expect(shape.terminal('FAILED')).toBe('failed');
    expect(shape.terminal('RENDERING')).toBeUndefined();
    expect(shape.isPending('RENDERING')).toBe(true);
  });

  it('when an error carries its code at the profile\'s pointer, then only that place counts', () => {
    expect(shape.carries(answer(402, { error: { type: 'insufficient_credits' } }), 'insufficient_credits')).toBe(true);
    expect(shape.carries(answer(402, { message: 'insufficient_credits' }), 'insufficient_credits')).toBe(false);
  });

  it.each([
    ['a URI ending in the code, at the profile\'s pointer', { code: { pointer: '/type', form: 'uri' } }, { type: 'https://errors.example.test/insufficient_credits' }, {}, true],
    ['a relative URI with a trailing slash and a query', { code: { pointer: '/type', form: 'uri' } }, { type: '/problems/insufficient_credits/?lang=en' }, {}, true],
    ['a URN ending in the code', { code: { pointer: '/type', form: 'uri' } }, { type: 'urn:problem:insufficient_credits' }, {}, true],
    ['a URI ending in another code', { code: { pointer: '/type', form: 'uri' } }, { type: 'https://errors.example.test/payment_required', detail: 'insufficient_credits' }, {}, false],
    ['the code itself where a URI is expected', { code: { pointer: '/type', form: 'uri' } }, { type: 'insufficient_credits' }, {}, true],
    ['the code in the profile\'s header', { code: { header: 'X-Error-Code' } }, {}, { 'x-error-code': 'insufficient_credits' }, true],
    ['another code in the profile\'s header', { code: { header: 'X-Error-Code' } }, { code: 'insufficient_credits' }, { 'x-error-code': 'payment_required' }, false],
    ['a URI in the profile\'s header', { code: { header: 'X-Problem-Type', form: 'uri' } }, {}, { 'x-problem-type': 'https://errors.example.test/insufficient_credits' }, true],
    ['anywhere: a URI ending in the code', { code: null }, { type: 'https://errors.example.test/insufficient_credits' }, {}, true],
    ['anywhere: the code in a sentence, in a nested array', { code: null }, { errors: [{ detail: 'Refused (insufficient_credits).' }] }, {}, true],
    ['anywhere: the code as a member name', { code: null }, { insufficient_credits: true }, {}, true],
    ['anywhere: a longer word that contains the code', { code: null }, { type: 'https://errors.example.test/insufficient_credits_v2', code: 'not_insufficient_credits' }, {}, false],
  ])('when an error carries %s, then carries() says so only if the code is there as a whole', (_name, errors, json, headers, expected) => {
    const reader = new Shape(parseProfile({ profile: 1, errors }));

    expect(reader.carries({ ...answer(402, json), responseHeaders: headers }, 'insufficient_credits')).toBe(expected);
  });

  it('when an error body is not JSON and the profile says anywhere, then the code is sought as a word in its text', () => {
    const reader = new Shape(parseProfile({ profile: 1, errors: { code: null } }));
    const text = (bodyText: string) => ({ ...answer(402, undefined), bodyText, json: undefined });

    expect(reader.carries(text('402 insufficient_credits: top up'), 'insufficient_credits')).toBe(true);
    expect(reader.carries(text('402 insufficient_credits_total'), 'insufficient_credits')).toBe(false);
  });

  it('when /v1/me shows only some balances by the profile, then those are read, and none when one of them is missing', () => {
    const reader = new Shape(parseProfile({ profile: 1, account: { credits: { available: '/credits/available', reserved: '/credits/reserved' } } }));

    expect(reader.balance(answer(200, { credits: { available: 5, reserved: 2, used: 9 } }))).toEqual({ available: 5, reserved: 2 });
    expect(reader.balance(answer(200, { credits: { available: 5 } }))).toBeUndefined();
    expect([reader.shows('available'), reader.shows('reserved'), reader.shows('used')]).toEqual([true, true, false]);
  });

  it('when /v1/me shows no balance by the profile, then no balance is read from it', () => {
    expect(shape.balance(answer(200, { workspace: 'ws', credits: { available: 1, reserved: 0, used: 0 } }))).toBeUndefined();
    expect(new Shape(CONTRACT_PROFILE).balance(answer(200, { credits: { available: 1, reserved: 2, used: 3 } }))).toEqual({ available: 1, reserved: 2, used: 3 });
  });

  it('when the key is presented, then the profile\'s header and scheme are used', () => {
    expect(shape.credential('k')).toEqual(['x-api-key', 'k']);
    expect(new Shape(CONTRACT_PROFILE).credential('k')).toEqual(['authorization', 'Bearer k']);
  });
});
