// Drafting an implementation profile from an OpenAPI document: what the document tells
// comes out as the hand-written profile has it, what it cannot tell becomes a note, and
// every draft is a profile the runner accepts.
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { draftCommand } from '../src/implementation/draft-command.ts';
import { draftProfile, type Draft } from '../src/implementation/draft.ts';
import { loadDocument } from '../src/implementation/openapi-document.ts';
import { at, CONTRACT_PROFILE, loadProfile, parseProfile, type ImplementationProfile } from '../src/implementation/profile.ts';

const path = (relative: string) => fileURLToPath(new URL(relative, import.meta.url));
const INDEPENDENT_OPENAPI = path('./fixtures/independent.openapi.yaml');
const INDEPENDENT_PROFILE = path('../examples/independent.profile.yaml');
const CONTRACT_OPENAPI = path('../../generated/openapi.json');
/** The same contract as written: a root of relative $refs to one file per path and component. */
const CONTRACT_SOURCE = path('../../openapi/openapi.yaml');

/** The members an OpenAPI document can tell; prices and failure it cannot. */
function told(profile: ImplementationProfile) {
  const { auth, create, records, errors, account, events } = profile;
  return { auth, create, records, errors, account, events };
}

function membersNoted(draft: Draft): string[] {
  return draft.notes.map((note) => note.slice(0, note.indexOf(':')));
}

type Json = Record<string, unknown>;
const ok = (schema: Json) => ({ description: 'ok', content: { 'application/json': { schema } } });
const record = (status: Json = { type: 'string', enum: ['queued', 'ready', 'failed'] }) => ({ type: 'object', properties: { id: { type: 'string' }, status } });

type Operation = Json & { responses: Json };
interface Small extends Json {
  components: Json;
  paths: Record<'/v1/avatars' | '/v1/avatar-videos', { post: Operation }> & Record<'/v1/avatars/{id}' | '/v1/avatar-videos/{id}' | '/v1/me', { get: Operation }>;
}

/** A small OpenAPI document with the five operations; `change` edits it before drafting. */
function documentWith(change?: (doc: Small) => void): Small {
  const doc: Small = {
    openapi: '3.1.0',
    info: { title: 'Tiny', version: '1' },
    security: [{ bearer: [] }],
    components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
    paths: {
      '/v1/avatars': { post: { responses: { '202': ok(record()), '422': { description: 'invalid' } } } },
      '/v1/avatars/{id}': { get: { responses: { '200': ok(record()) } } },
      '/v1/avatar-videos': {
        post: {
          requestBody: { content: { 'application/json': { schema: { type: 'object', required: ['avatar_id', 'script'], properties: { avatar_id: { type: 'string' }, script: { type: 'string' } } } } } },
          responses: { '202': ok(record()) },
        },
      },
      '/v1/avatar-videos/{id}': { get: { responses: { '200': ok(record()) } } },
      '/v1/me': { get: { responses: { '200': ok({ type: 'object', properties: { account_id: { type: 'string' } } }) } } },
    },
  };
  change?.(doc);
  return doc;
}

function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'draft-profile-'));
}

function commandIo() {
  const io = { stdout: '', stderr: '', out: (text: string) => void (io.stdout += text), err: (text: string) => void (io.stderr += text) };
  return io;
}

describe('drafting a profile from the independent implementation’s OpenAPI document', () => {
  let draft: Draft;
  beforeAll(async () => {
    draft = draftProfile(await loadDocument(INDEPENDENT_OPENAPI));
  });

  it('when drafted, then every member the document tells equals the hand-written profile', () => {
    const expected = loadProfile(INDEPENDENT_PROFILE);

    const drafted = parseProfile(draft.profile);

    expect(told(drafted)).toEqual(told(expected));
    expect(drafted.name).toBe(expected.name);
  });

  it('when drafted, then prices and failure are null and each has a note to review', () => {
    const drafted = parseProfile(draft.profile);

    expect(drafted.prices).toBeNull();
    expect(drafted.failure).toBeNull();
    expect(membersNoted(draft)).toEqual(expect.arrayContaining(['prices', 'failure']));
    expect(draft.notes).toContain('prices: unknown, so the credit checks that compare amounts are skipped');
  });

  it('when drafted, then /v1/me without a balance is a noted null and no windows', () => {
    expect(draft.profile.account).toEqual({ id: '/workspace', credits: null, generation_windows: [] });
    expect(membersNoted(draft)).toContain('account.credits');
  });

  it('when written as YAML, then it reads back as the same profile with a review comment at each noted member', () => {
    const lines = draft.yaml.split('\n');

    expect(parseYaml(draft.yaml)).toEqual(draft.profile);
    expect(lines[0]).toMatch(/^# Implementation profile drafted .*"Independent avatars \(test implementation\)"/);
    const account = lines.indexOf('account:');
    for (const [member, from] of [['prices: null', 0], ['failure: null', 0], ['  credits: null', account]] as const) {
      const at = lines.indexOf(member, from);
      expect(lines[at - 1]).toMatch(/^\s*# review: /);
    }
    expect(lines.filter((line) => line.trimStart().startsWith('# review: '))).toHaveLength(draft.notes.length);
    expect(draft.yaml).toContain('statuses: [201]');
  });
});

describe('drafting a profile from this project’s own contract', () => {
  let draft: Draft;
  beforeAll(async () => {
    draft = draftProfile(await loadDocument(CONTRACT_OPENAPI));
  });

  it('when drafted, then every member the document tells equals the contract profile', () => {
    const drafted = parseProfile(draft.profile);

    expect(told(drafted)).toEqual(told(CONTRACT_PROFILE));
  });

  it('when drafted, then the prices are the ones each create states in x-credit-cost, taken without a note', () => {
    const drafted = parseProfile(draft.profile);

    expect(drafted.prices).toEqual(CONTRACT_PROFILE.prices);
    expect(membersNoted(draft)).not.toContain('prices');
  });

  it('when the creates state no price, then the prices come from the create answers’ examples and are flagged for review', () => {
    const document = JSON.parse(readFileSync(CONTRACT_OPENAPI, 'utf8'));
    delete document.paths['/v1/avatars'].post['x-credit-cost'];
    delete document.paths['/v1/avatar-videos'].post['x-credit-cost'];

    const unstated = draftProfile(document);

    expect(parseProfile(unstated.profile).prices).toEqual(CONTRACT_PROFILE.prices);
    expect(unstated.notes.find((note) => note.startsWith('prices:'))).toMatch(new RegExp(`examples .*avatar ${CONTRACT_PROFILE.prices!.avatar}, avatar_video ${CONTRACT_PROFILE.prices!.avatar_video}`));
  });

  it('when drafted, then only the clock, the idempotency keys, the lists, the delivery log and the structured rate-limit fields it found and failure are left to review', () => {
    expect(membersNoted(draft)).toEqual(['clock', 'idempotency', 'lists', 'webhook_log', 'rate_limits', 'failure']);
    expect(draft.profile.failure).toBeNull();
  });

  it('when the creates take an idempotency key, then the draft names it and the replay header, with the runner’s default refusals', () => {
    expect(parseProfile(draft.profile).idempotency).toEqual({ header: 'Idempotency-Key', replayedHeader: 'Idempotent-Replayed', reused: [400, 409, 422] });
  });

  it('when the document has lists, then the draft pages them as the contract profile does', () => {
    expect(parseProfile(draft.profile).lists).toEqual(CONTRACT_PROFILE.lists);
  });

  it('when the document has a delivery log with a replay, then the draft reads and replays it as the contract profile does', () => {
    expect(parseProfile(draft.profile).webhookLog).toEqual(CONTRACT_PROFILE.webhookLog);
  });

  it('when the document has a sandbox clock, then the draft uses it as the contract profile does', () => {
    expect(parseProfile(draft.profile).clock).toEqual(CONTRACT_PROFILE.clock);
  });

  it('when the document has no clock, then the draft has none', () => {
    const raw = JSON.parse(readFileSync(CONTRACT_OPENAPI, 'utf8')) as { paths: Record<string, unknown> };
    for (const path of Object.keys(raw.paths)) if (path.includes('clock')) delete raw.paths[path];

    const drafted = draftProfile(raw);

    expect(parseProfile(drafted.profile).clock).toBeNull();
    expect(membersNoted(drafted)).not.toContain('clock');
  });

  it('when drafted from the JSON without loadDocument, then $refs are followed all the same', () => {
    const raw = JSON.parse(readFileSync(CONTRACT_OPENAPI, 'utf8')) as unknown;

    expect(draftProfile(raw).profile).toEqual(draft.profile);
  });

  it('when drafted from the split source files instead of the bundle, then the profile and its notes are the same', async () => {
    const fromSource = draftProfile(await loadDocument(CONTRACT_SOURCE));

    expect(fromSource.profile).toEqual(draft.profile);
    expect(fromSource.notes).toEqual(draft.notes);
  });

  it('when given a name, then the name replaces the document’s title', () => {
    expect(draftProfile(JSON.parse(readFileSync(CONTRACT_OPENAPI, 'utf8')), { name: 'Staging' }).profile.name).toBe('Staging');
  });
});

describe('drafting from documents that tell less or differently', () => {
  const empty = { openapi: '3.1.0', info: { title: 'Empty', version: '1' }, paths: {} };
  const basicAuth = documentWith((doc) => (doc.components.securitySchemes = { bearer: { type: 'http', scheme: 'basic' } }));
  const cases: [string, Json][] = [
    ['a document with no operations', empty],
    ['a document without info', { openapi: '3.0.3', paths: {} }],
    ['the small document', documentWith()],
    ['a document whose only states are the terminal ones', documentWith((doc) => (doc.paths['/v1/avatars/{id}'].get = { responses: { '200': ok(record({ enum: ['READY', 'FAILED'] })) } }))],
    ['a document with basic auth', basicAuth],
    ['a document whose video request names nothing', documentWith((doc) => (doc.paths['/v1/avatar-videos'].post = { responses: { '201': ok({}) } }))],
  ];

  it.each(cases)('when drafted from %s, then the profile passes parseProfile and its YAML reads back the same', (_, document) => {
    const draft = draftProfile(document);

    expect(() => parseProfile(draft.profile)).not.toThrow();
    expect(parseProfile(parseYaml(draft.yaml))).toEqual(parseProfile(draft.profile));
  });

  it('when the document has no operations, then each kept default names its member in a note', () => {
    const draft = draftProfile(empty);

    expect(membersNoted(draft)).toEqual(expect.arrayContaining(['auth', 'create.avatar', 'create.video', 'create.video.body', 'records.status', 'errors.code', 'errors.validation', 'account', 'events.type', 'prices', 'failure']));
  });

  it('when both list operations take a page size and a cursor, then the draft pages them by the document’s own names; without them it has no lists', () => {
    const list = {
      parameters: [{ name: 'page_size', in: 'query', schema: { type: 'integer' } }, { name: 'after', in: 'query', schema: { type: 'string' } }],
      responses: { '200': ok({ type: 'object', properties: { items: { type: 'array', items: record() }, next_page: { type: ['string', 'null'] } } }) },
    };
    const withLists = documentWith((doc) => {
      Object.assign(doc.paths['/v1/avatars'], { get: list });
      Object.assign(doc.paths['/v1/avatar-videos'], { get: list });
    });
    const onlyAvatars = documentWith((doc) => void Object.assign(doc.paths['/v1/avatars'], { get: list }));

    const drafted = draftProfile(withLists);

    expect(parseProfile(drafted.profile).lists).toEqual({ limit: 'page_size', cursor: 'after', data: '/items', next: '/next_page' });
    expect(membersNoted(drafted)).toContain('lists');
    expect(parseProfile(draftProfile(onlyAvatars).profile).lists).toBeNull();
    expect(parseProfile(draftProfile(documentWith()).profile).lists).toBeNull();
  });

  it('when an answer documents a RateLimit-Policy header, then the draft claims revision 11 of the IETF draft, as the contract does (revision 10 writes the fields alike), marked for review; without one it claims no fields', () => {
    const withPolicy = documentWith((doc) => {
      doc.paths['/v1/avatars/{id}'].get.responses['200'] = { ...ok(record()), headers: { 'RateLimit-Policy': { schema: { type: 'string' } } } };
    });

    const drafted = draftProfile(withPolicy);

    expect(drafted.profile.rate_limits).toEqual({ fields: 'ietf-draft-11' });
    expect(parseProfile(drafted.profile).rateLimits.fields).toBe('ietf-draft-11');
    expect(drafted.notes.find((note) => note.startsWith('rate_limits:'))).toMatch(/^rate_limits: answers carry RateLimit-Policy: drafted as the IETF draft's revision 11, which writes them as revision 10 did .* set fields to null/);
    const lines = drafted.yaml.split('\n');
    expect(lines[lines.indexOf('rate_limits:') - 1]).toMatch(/^# review: rate_limits: |^# review: answers carry RateLimit-Policy/);
    expect(parseProfile(draftProfile(documentWith()).profile).rateLimits.fields).toBeNull();
    expect(membersNoted(draftProfile(documentWith()))).not.toContain('rate_limits');
  });

  it('when a shared response documents a RateLimit header through $refs, then the draft finds it there', () => {
    const throughRefs = documentWith((doc) => {
      doc.components.headers = { RateLimit: { schema: { type: 'string' } } };
      doc.components.responses = { Record: { ...ok(record()), headers: { RateLimit: { $ref: '#/components/headers/RateLimit' } } } };
      doc.paths['/v1/avatar-videos/{id}'].get.responses['200'] = { $ref: '#/components/responses/Record' };
    });

    expect(draftProfile(throughRefs).profile.rate_limits).toEqual({ fields: 'ietf-draft-11' });
  });

  it('when the key goes by http basic, then auth keeps the default and the note says basic is unsupported', () => {
    const draft = draftProfile(basicAuth);

    expect(draft.profile.auth).toEqual({ header: 'Authorization', scheme: 'Bearer' });
    expect(draft.notes.find((note) => note.startsWith('auth:'))).toMatch(/unsupported.*http basic/);
  });

  it('when GET wraps the record, then the state pointer carries the wrapper', () => {
    const document = documentWith((doc) => (doc.paths['/v1/avatars/{id}'].get = { responses: { '200': ok({ type: 'object', properties: { avatar: record() } }) } }));

    const profile = parseProfile(draftProfile(document).profile);

    expect(profile.records.status).toBe('/avatar/status');
    expect(profile.records.states).toEqual({ pending: ['queued'], ready: 'ready', failed: 'failed' });
  });

  it('when the video request uses camelCase and requires another member, then the body maps both placeholders and notes the other member', () => {
    const document = documentWith((doc) => {
      doc.paths['/v1/avatar-videos'].post.requestBody = {
        content: { 'application/json': { schema: { type: 'object', required: ['avatarId', 'transcript', 'voice'], properties: { avatarId: { type: 'string' }, transcript: { type: 'string' }, voice: { type: 'string' }, callbackUrl: { type: 'string' } } } } },
      };
    });

    const draft = draftProfile(document);

    expect((draft.profile.create as { video: { body: Json } }).video.body).toEqual({ avatarId: '{{avatar_id}}', transcript: '{{script}}', callbackUrl: '{{webhook_url}}' });
    expect(draft.notes).toContainEqual(expect.stringMatching(/^create\.video\.body: voice is required/));
  });

  it('when the create operations state their prices in an extension, then prices are taken without a note', () => {
    const document = documentWith((doc) => {
      doc.paths['/v1/avatars'].post['x-credit-cost'] = 3;
      doc.paths['/v1/avatar-videos'].post['x-credit-cost'] = 7;
    });

    const draft = draftProfile(document);

    expect(draft.profile.prices).toEqual({ avatar: 3, avatar_video: 7 });
    expect(membersNoted(draft)).not.toContain('prices');
  });

  it('when the error body is RFC 9457 with only a URI type, then errors.code is its last segment, noted', () => {
    const problem = { description: 'refused', content: { 'application/problem+json': { schema: { type: 'object', properties: { type: { type: 'string', format: 'uri' }, title: { type: 'string' } } } } } };
    const document = documentWith((doc) => (doc.paths['/v1/avatars'].post.responses = { '202': ok(record()), '400': problem }));

    const draft = draftProfile(document);

    expect((draft.profile.errors as Json).code).toEqual({ pointer: '/type', form: 'uri' });
    expect(parseProfile(draft.profile).errors.code).toEqual({ pointer: '/type', form: 'uri' });
    expect(draft.notes).toContainEqual(expect.stringMatching(/^errors\.code: \/type is a URI \(RFC 9457's type\): its last segment is taken as the code/));
  });

  it('when the error body has a code member beside a URI type, then the code member is drafted without a note', () => {
    const schema = { type: 'object', properties: { type: { type: 'string', format: 'uri-reference' }, code: { type: 'string' } } };
    const document = documentWith((doc) => (doc.paths['/v1/avatars'].post.responses = { '202': ok(record()), '422': { description: 'refused', content: { 'application/problem+json': { schema } } } }));

    const draft = draftProfile(document);

    expect((draft.profile.errors as Json).code).toBe('/code');
    expect(membersNoted(draft)).not.toContain('errors.code');
  });

  it('when the error answers carry their code only in a header, then errors.code is that header, noted', () => {
    const refused = { description: 'refused', headers: { 'X-Error-Code': { schema: { type: 'string' } } }, content: { 'text/plain': { schema: { type: 'string' } } } };
    const document = documentWith((doc) => (doc.paths['/v1/avatars'].post.responses = { '202': ok(record()), '422': refused, '402': refused }));

    const draft = draftProfile(document);

    expect((draft.profile.errors as Json).code).toEqual({ header: 'X-Error-Code', form: 'value' });
    expect(draft.notes).toContainEqual(expect.stringMatching(/^errors\.code: the code is read from the X-Error-Code header/));
  });

  it('when /v1/me shows available and reserved but not used, then account.credits names those two, noted', () => {
    const me = { type: 'object', properties: { account_id: { type: 'string' }, balance: { type: 'object', properties: { available: { type: 'integer' }, reserved: { type: 'integer' } } } } };
    const document = documentWith((doc) => (doc.paths['/v1/me'].get.responses = { '200': ok(me) }));

    const draft = draftProfile(document);

    expect((draft.profile.account as Json).credits).toEqual({ available: '/balance/available', reserved: '/balance/reserved' });
    expect(draft.notes).toContain('account.credits: GET /v1/me shows available and reserved but not used: the credit checks judge what is shown, and those that need used are not applicable');
  });

  it('when the input is not an OpenAPI document, then drafting refuses it', () => {
    expect(() => draftProfile(['not', 'a', 'document'])).toThrow(/not an OpenAPI document/);
    expect(() => draftProfile({ swagger: '2.0', paths: {} })).toThrow(/Swagger 2\.0/);
  });
});

describe('loading a document', () => {
  let server: Server;
  let base: string;
  beforeAll(async () => {
    const yaml = readFileSync(INDEPENDENT_OPENAPI, 'utf8');
    server = createServer((req, res) => {
      if (req.url === '/openapi.yaml') res.writeHead(200, { 'content-type': 'application/yaml' }).end(yaml);
      else res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  it('when given an http URL, then it fetches the document and drafts the same profile as from the file', async () => {
    const fromUrl = draftProfile(await loadDocument(`${base}/openapi.yaml`));

    expect(fromUrl.profile).toEqual(draftProfile(await loadDocument(INDEPENDENT_OPENAPI)).profile);
  });

  it('when the URL answers 404, then the error names the URL and the status', async () => {
    await expect(loadDocument(`${base}/missing.yaml`)).rejects.toThrow(`cannot fetch ${base}/missing.yaml (HTTP 404)`);
  });

  it('when loaded, then local $refs are replaced by what they point at', async () => {
    const document = await loadDocument(INDEPENDENT_OPENAPI);

    const notFound: unknown = at(document, '/paths/~1v1~1avatars~1{avatar_id}/get/responses/404');

    expect(notFound).not.toHaveProperty('$ref');
    expect(notFound).toHaveProperty('description', expect.stringMatching(/^Refused/));
  });
});

describe('loading a document split into files', () => {
  /** Writes `files` (name -> YAML) into a fresh folder and returns its path. */
  function folderWith(files: Record<string, string>): string {
    const dir = tempDir();
    for (const [name, text] of Object.entries(files)) {
      mkdirSync(dirname(join(dir, name)), { recursive: true });
      writeFileSync(join(dir, name), text);
    }
    return dir;
  }

  it('when a $ref names a fragment of another file, then it resolves there, and that file’s own #/ refs resolve within it', async () => {
    const dir = folderWith({
      'api.yaml': 'openapi: 3.1.0\npaths:\n  /a:\n    $ref: paths/a.yaml\n',
      'paths/a.yaml': 'get:\n  responses:\n    "200":\n      $ref: ../shared.yaml#/responses/Ok\n',
      'shared.yaml': 'responses:\n  Ok:\n    description: fine\n    content:\n      application/json:\n        schema:\n          $ref: "#/schemas/Thing"\nschemas:\n  Thing:\n    type: object\n',
    });

    const document = await loadDocument(join(dir, 'api.yaml'));

    expect(at(document, '/paths/~1a/get/responses/200/content/application~1json/schema')).toEqual({ type: 'object' });
  });

  it('when a file a $ref names is missing, then the error names that file and the file that refers to it', async () => {
    const dir = folderWith({ 'api.yaml': 'openapi: 3.1.0\npaths:\n  /a:\n    $ref: paths/gone.yaml\n' });

    await expect(loadDocument(join(dir, 'api.yaml'))).rejects.toThrow(/^cannot read .*paths\/gone\.yaml, referenced from .*api\.yaml \(ENOENT/);
  });

  it('when a $ref is an absolute URL, then nothing is fetched and the ref is left as it is', async () => {
    const ref = 'https://example.invalid/schemas.yaml#/Thing';
    const dir = folderWith({ 'api.yaml': `openapi: 3.1.0\npaths:\n  /a:\n    $ref: "${ref}"\n` });

    const document = await loadDocument(join(dir, 'api.yaml'));

    expect(at(document, '/paths/~1a')).toEqual({ $ref: ref });
  });

  it('when a $ref names another host without a scheme (//host/...), then nothing is fetched and the ref is left as it is', async () => {
    const ref = '//example.invalid/schemas.yaml#/Thing';
    const dir = folderWith({ 'api.yaml': `openapi: 3.1.0\npaths:\n  /a:\n    $ref: "${ref}"\n` });

    const document = await loadDocument(join(dir, 'api.yaml'));

    expect(at(document, '/paths/~1a')).toEqual({ $ref: ref });
  });
});

describe('the draft-profile command', () => {
  it('when given this project’s split source, then it exits 0 leaving only failure, and the clock, idempotency keys, lists, delivery log and rate-limit fields it found to review', async () => {
    const io = commandIo();

    const code = await draftCommand([CONTRACT_SOURCE], io);

    expect(code).toBe(0);
    expect(parseProfile(parseYaml(io.stdout))).toEqual(parseProfile(draftProfile(JSON.parse(readFileSync(CONTRACT_OPENAPI, 'utf8'))).profile));
    expect(io.stderr.trimEnd().split('\n').map((line) => line.slice('review: '.length, line.indexOf(':', 'review: '.length)))).toEqual(['clock', 'idempotency', 'lists', 'webhook_log', 'rate_limits', 'failure']);
  });

  it('when the file does not exist, then it exits 2 with one line naming the file', async () => {
    const io = commandIo();
    const missing = join(tempDir(), 'nowhere.yaml');

    const code = await draftCommand([missing], io);

    expect(code).toBe(2);
    expect(io.stderr).toContain(missing);
    expect(io.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(io.stdout).toBe('');
  });

  it('when the file is not YAML, then it exits 2 saying so', async () => {
    const io = commandIo();
    const file = join(tempDir(), 'broken.yaml');
    writeFileSync(file, 'openapi: [3.1\n  paths: {');

    expect(await draftCommand([file], io)).toBe(2);
    expect(io.stderr).toMatch(/broken\.yaml is neither YAML nor JSON/);
  });

  it('when no document is named, then it exits 2 with the usage', async () => {
    const io = commandIo();

    expect(await draftCommand([], io)).toBe(2);
    expect(io.stderr).toContain('usage: draft-profile <openapi file or URL> [--name <name>] [--output <file>]');
  });

  it('when given --output, then it writes the YAML there and lists the notes on stderr', async () => {
    const io = commandIo();
    const output = join(tempDir(), 'independent.profile.yaml');

    const code = await draftCommand([INDEPENDENT_OPENAPI, '--output', output, '--name', 'Independent'], io);

    expect(code).toBe(0);
    const written = loadProfile(output);
    expect(written.name).toBe('Independent');
    expect(written.auth).toEqual({ header: 'X-Api-Key', scheme: null });
    expect(io.stdout).toContain(`wrote ${output}`);
    expect(io.stderr).toContain('review: prices: unknown');
    expect(io.stderr.trimEnd().split('\n').every((line) => line.startsWith('review: '))).toBe(true);
  });

  it('when given no --output, then it prints the YAML on stdout', async () => {
    const io = commandIo();

    expect(await draftCommand([CONTRACT_OPENAPI], io)).toBe(0);
    expect(parseYaml(io.stdout)).toMatchObject({ profile: 1, name: 'Avatar Service API' });
  });
});
