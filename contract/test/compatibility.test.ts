// The breaking-change classifier, rule by rule: each row changes the small fixture
// bundle in one way and names every change the classifier must report, no more.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { compareDocuments, type Change, type ChangeKind } from '../compatibility.ts';
import { loadBundle } from '../schemas.ts';

// JSON read from a file, edited freely by the rows.
type Node = { [key: string]: any };

const FIXTURE = readFileSync(new URL('./fixtures/bundle.json', import.meta.url), 'utf8');
const fixture = (): Node => JSON.parse(FIXTURE) as Node;

type Expected = Pick<Change, 'kind' | 'where' | 'rule'>;
const change =
  (kind: ChangeKind) =>
  (where: string, rule: string): Expected => ({ kind, where, rule });
const breaking = change('breaking');
const additive = change('additive');
const other = change('other');

const GET_AVATAR = 'GET /v1/avatars/{id}';
const AVATAR = `${GET_AVATAR} 200 response`;
const BODY = 'POST /v1/avatars request body';
const PROMPT = `${BODY}: [From a prompt]`;
const PAYLOAD = 'webhook avatar.ready payload';

interface Row {
  when: string;
  base?: (doc: Node) => void;
  head: (doc: Node) => void;
  then: Expected[];
}

const schemas = (doc: Node) => doc.components.schemas;
const prompt = (doc: Node) => schemas(doc).PromptAvatarCreateRequest;
const getAvatar = (doc: Node) => doc.paths['/v1/avatars/{id}'].get;
const avatarId = (doc: Node) => schemas(doc).Avatar.properties.id;

const ROWS: Row[] = [
  // Paths, operations, responses
  { when: 'an operation is removed', head: (d) => delete d.paths['/v1/me'].get, then: [breaking('GET /v1/me', 'operation removed')] },
  { when: 'an operation is added', head: (d) => (d.paths['/v1/me'].patch = { responses: { 200: { description: 'Updated.' } } }), then: [additive('PATCH /v1/me', 'operation added')] },
  { when: 'a path is removed', head: (d) => delete d.paths['/v1/avatars/{id}'], then: [breaking(GET_AVATAR, 'operation removed')] },
  { when: 'a path parameter is renamed', head: (d) => renamePath(d, '/v1/avatars/{id}', '/v1/avatars/{avatar_id}', 'avatar_id'), then: [] },
  { when: 'a response status is removed', head: (d) => delete getAvatar(d).responses['404'], then: [breaking(`${GET_AVATAR} 404 response`, 'response status removed')] },
  { when: 'a response status is added', head: (d) => (getAvatar(d).responses['429'] = { $ref: '#/components/responses/Problem' }), then: [additive(`${GET_AVATAR} 429 response`, 'response status added')] },
  { when: 'a response header is removed', head: (d) => delete d.paths['/v1/avatars'].post.responses['202'].headers.Location, then: [breaking('POST /v1/avatars 202 response header Location', 'response header removed')] },
  { when: 'a response header is added', head: (d) => (d.paths['/v1/avatars'].post.responses['202'].headers['X-Request-Id'] = { schema: { type: 'string' } }), then: [additive('POST /v1/avatars 202 response header X-Request-Id', 'response header added')] },
  { when: 'a response header is no longer required', head: (d) => (d.paths['/v1/avatars'].post.responses['202'].headers.Location.required = false), then: [breaking('POST /v1/avatars 202 response header Location', 'response header no longer required')] },
  { when: 'an operation is deprecated', head: (d) => (d.paths['/v1/me'].get.deprecated = true), then: [additive('GET /v1/me', 'deprecated')] },
  { when: 'authentication becomes required', base: (d) => (d.paths['/v1/me'].get.security = []), head: () => {}, then: [breaking('GET /v1/me', 'security option removed'), additive('GET /v1/me', 'security option added')] },

  // Response members: what clients read
  { when: 'a response member is renamed', head: (d) => renameMember(schemas(d).Avatar, 'name', 'title'), then: [breaking(`${AVATAR}: name`, 'response member removed'), additive(`${AVATAR}: title`, 'response member added')] },
  { when: 'an optional response member is added', head: (d) => (schemas(d).Avatar.properties.preview_url = { type: 'string' }), then: [additive(`${AVATAR}: preview_url`, 'response member added')] },
  { when: 'a response member is no longer required', head: (d) => (schemas(d).Avatar.required = ['id', 'status']), then: [breaking(`${AVATAR}: name`, 'response member no longer required')] },
  { when: "a response member's type changes", head: (d) => (schemas(d).Account.properties.credits.properties.used = { type: 'string' }), then: [breaking('GET /v1/me 200 response: credits.used', 'response type changed')] },
  { when: "a response member's type widens (nullable)", head: (d) => (schemas(d).Avatar.properties.name.type = ['string', 'null']), then: [breaking(`${AVATAR}: name`, 'response type widened')] },
  { when: 'a response enum gains a value', head: (d) => schemas(d).JobStatus.enum.push('cancelled'), then: [breaking(`${AVATAR}: status`, 'response enum value added')] },
  { when: 'a response enum loses a value', head: (d) => schemas(d).JobStatus.enum.pop(), then: [additive(`${AVATAR}: status`, 'response enum value removed')] },
  { when: 'a response constraint is loosened', head: (d) => delete schemas(d).Avatar.properties.credits.minimum, then: [breaking(`${AVATAR}: credits`, 'response constraint loosened')] },
  { when: 'a shared component changes', head: (d) => renameMember(schemas(d).Problem, 'code', 'type'), then: [
    breaking('POST /v1/avatars 422 response: code', 'response member removed'),
    additive('POST /v1/avatars 422 response: type', 'response member added'),
    breaking(`${GET_AVATAR} 404 response: code`, 'response member removed'),
    additive(`${GET_AVATAR} 404 response: type`, 'response member added'),
  ] },
  { when: 'a recursive schema changes', head: (d) => delete schemas(d).Avatar.properties.credits, then: [breaking(`${AVATAR}: credits`, 'response member removed')] },
  { when: 'a response content type is replaced', head: (d) => renameKey(d.paths['/v1/me'].get.responses['200'].content, 'application/json', 'application/vnd.avatar+json'), then: [
    breaking('GET /v1/me 200 response (application/json)', 'response content type removed'),
    additive('GET /v1/me 200 response (application/vnd.avatar+json)', 'response content type added'),
  ] },

  // Webhooks: their payloads and headers are read by clients
  { when: 'a webhook is removed', head: (d) => delete d.webhooks['avatar.ready'], then: [breaking('webhook avatar.ready', 'webhook removed')] },
  { when: 'a webhook is added (a new event type)', head: (d) => (d.webhooks['avatar.failed'] = d.webhooks['avatar.ready']), then: [additive('webhook avatar.failed', 'webhook added')] },
  { when: "a webhook payload member's type changes", head: (d) => (schemas(d).AvatarReadyEvent.properties.data.properties.status.type = 'integer'), then: [breaking(`${PAYLOAD}: data.status`, 'payload type changed')] },
  { when: 'a webhook payload member is removed', head: (d) => renameMember(schemas(d).AvatarReadyEvent.properties.data, 'id', 'avatar_id'), then: [breaking(`${PAYLOAD}: data.id`, 'payload member removed'), additive(`${PAYLOAD}: data.avatar_id`, 'payload member added')] },
  { when: "a webhook payload's const changes", head: (d) => (schemas(d).AvatarReadyEvent.properties.type.const = 'avatar.done'), then: [breaking(`${PAYLOAD}: type`, 'payload enum value added'), additive(`${PAYLOAD}: type`, 'payload enum value removed')] },
  { when: 'a webhook header is removed', head: (d) => (d.webhooks['avatar.ready'].post.parameters = []), then: [breaking('webhook avatar.ready header X-Signature', 'webhook header removed')] },

  // Request members: what clients send
  { when: 'a required request member is added', head: (d) => addMember(prompt(d), 'voice', { type: 'string' }, true), then: [breaking(`${PROMPT}.voice`, 'required request member added')] },
  { when: 'an optional request member is added', head: (d) => addMember(prompt(d), 'voice', { type: 'string' }, false), then: [additive(`${PROMPT}.voice`, 'optional request member added')] },
  { when: 'a member of a closed request schema is removed', head: (d) => delete prompt(d).properties.style, then: [breaking(`${PROMPT}.style`, 'request member removed')] },
  { when: 'a member of an open request schema is removed', head: (d) => delete schemas(d).PhotoAvatarCreateRequest.properties.crop, then: [other(`${BODY}: [From a photo].crop`, 'request member removed')] },
  { when: 'a request member becomes required', head: (d) => prompt(d).required.push('style'), then: [breaking(`${PROMPT}.style`, 'request member now required')] },
  { when: 'a request member becomes optional', head: (d) => (prompt(d).required = ['type', 'name']), then: [additive(`${PROMPT}.prompt`, 'request member no longer required')] },
  { when: 'a request schema is closed', head: (d) => (schemas(d).PhotoAvatarCreateRequest.additionalProperties = false), then: [breaking(`${BODY}: [From a photo]`, 'request closed to other members')] },
  { when: "a request member's type narrows", head: (d) => (prompt(d).properties.seed.type = 'integer'), then: [breaking(`${PROMPT}.seed`, 'request type narrowed')] },
  { when: "a request member's type widens", head: (d) => (prompt(d).properties.name.type = ['string', 'null']), then: [additive(`${PROMPT}.name`, 'request type widened')] },
  { when: 'a request enum loses a value', head: (d) => (prompt(d).properties.style.enum = ['photo']), then: [breaking(`${PROMPT}.style`, 'request enum value removed')] },
  { when: 'a request enum gains a value', head: (d) => prompt(d).properties.style.enum.push('anime'), then: [additive(`${PROMPT}.style`, 'request enum value added')] },
  { when: 'a request maxLength is lowered', head: (d) => (prompt(d).properties.name.maxLength = 100), then: [breaking(`${PROMPT}.name`, 'request constraint tightened')] },
  { when: 'a request minLength is raised', head: (d) => (prompt(d).properties.name.minLength = 2), then: [breaking(`${PROMPT}.name`, 'request constraint tightened')] },
  { when: 'a request maximum is added', head: (d) => (prompt(d).properties.seed.maximum = 10), then: [breaking(`${PROMPT}.seed`, 'request constraint tightened')] },
  { when: 'a request pattern is added', head: (d) => (prompt(d).properties.name.pattern = '^[A-Za-z ]+$'), then: [breaking(`${PROMPT}.name`, 'request constraint tightened')] },
  { when: 'a request format is added', head: (d) => (prompt(d).properties.name.format = 'email'), then: [breaking(`${PROMPT}.name`, 'request constraint tightened')] },
  { when: 'a request pattern changes', base: (d) => (prompt(d).properties.name.pattern = '^a'), head: (d) => (prompt(d).properties.name.pattern = '^b'), then: [breaking(`${PROMPT}.name`, 'request constraint changed')] },
  { when: 'a request maxLength is raised', head: (d) => (prompt(d).properties.prompt.maxLength = 8000), then: [additive(`${PROMPT}.prompt`, 'request constraint loosened')] },
  { when: 'a request format is removed', head: (d) => delete prompt(d).properties.webhook_url.format, then: [additive(`${PROMPT}.webhook_url`, 'request constraint loosened')] },
  { when: 'a request default changes', base: (d) => (prompt(d).properties.style.default = 'photo'), head: (d) => (prompt(d).properties.style.default = 'cartoon'), then: [breaking(`${PROMPT}.style`, 'request default changed')] },
  { when: 'a keyword the classifier does not model changes', head: (d) => (prompt(d).properties.name.not = { const: 'admin' }), then: [breaking(`${PROMPT}.name`, 'request schema changed')] },
  { when: 'a request body becomes required', base: (d) => (d.paths['/v1/avatars'].post.requestBody.required = false), head: () => {}, then: [breaking(BODY, 'request body now required')] },
  { when: 'a request content type is removed', base: (d) => addContentType(d.paths['/v1/avatars'].post.requestBody, 'multipart/form-data'), head: () => {}, then: [breaking(`${BODY} (multipart/form-data)`, 'request content type removed')] },
  { when: 'a request content type is added', head: (d) => addContentType(d.paths['/v1/avatars'].post.requestBody, 'multipart/form-data'), then: [additive(`${BODY} (multipart/form-data)`, 'request content type added')] },

  // Request parameters and headers
  { when: 'a required query parameter is added', head: (d) => getAvatar(d).parameters.push({ name: 'fields', in: 'query', required: true, schema: { type: 'string' } }), then: [breaking(`${GET_AVATAR} query parameter fields`, 'required request parameter added')] },
  { when: 'a required request header is added', head: (d) => getAvatar(d).parameters.push({ name: 'Idempotency-Key', in: 'header', required: true, schema: { type: 'string' } }), then: [breaking(`${GET_AVATAR} header Idempotency-Key`, 'required request header added')] },
  { when: 'an optional query parameter is added', head: (d) => getAvatar(d).parameters.push({ name: 'fields', in: 'query', schema: { type: 'string' } }), then: [additive(`${GET_AVATAR} query parameter fields`, 'optional request parameter added')] },
  { when: 'a query parameter becomes required', head: (d) => (getAvatar(d).parameters[0].required = true), then: [breaking(`${GET_AVATAR} query parameter expand`, 'request parameter now required')] },
  { when: 'a query parameter is removed', head: (d) => (getAvatar(d).parameters = []), then: [breaking(`${GET_AVATAR} query parameter expand`, 'request parameter removed')] },
  { when: 'a path parameter is constrained', head: (d) => (d.paths['/v1/avatars/{id}'].parameters[0].schema.maxLength = 32), then: [breaking(`${GET_AVATAR} path parameter id`, 'request constraint tightened')] },

  // An ID's format, stated by a schema or only by its description: visible either way
  { when: 'a response ID gains a pattern', head: (d) => (avatarId(d).pattern = '^av_[a-z0-9]{24}$'), then: [additive(`${AVATAR}: id`, 'response constraint tightened')] },
  { when: "a response ID's pattern changes", base: (d) => (avatarId(d).pattern = '^av_[a-z0-9]{24}$'), head: (d) => (avatarId(d).pattern = '^av_[a-z0-9]{33}$'), then: [breaking(`${AVATAR}: id`, 'response constraint changed')] },
  { when: "a response ID's pattern is removed", base: (d) => (avatarId(d).pattern = '^av_[a-z0-9]{24}$'), head: () => {}, then: [breaking(`${AVATAR}: id`, 'response constraint loosened')] },
  { when: 'a path ID gains a pattern', head: (d) => (d.paths['/v1/avatars/{id}'].parameters[0].schema.pattern = '^av_[a-z0-9]{24}$'), then: [breaking(`${GET_AVATAR} path parameter id`, 'request constraint tightened')] },
  { when: 'the format a response ID\'s description states changes', base: (d) => (avatarId(d).description = 'The avatar ID, `av_` followed by 24 lowercase letters and digits.'), head: (d) => (avatarId(d).description = 'The avatar ID, `av_` followed by 33 lowercase letters and digits.'), then: [other(`${AVATAR}: id`, 'documentation changed'), breaking(`${AVATAR}: id`, 'ID format documentation changed')] },
  { when: 'the prefix a response ID\'s description states changes', base: (d) => (avatarId(d).description = 'The avatar ID, `av_` followed by 24 lowercase letters and digits.'), head: (d) => (avatarId(d).description = 'The avatar ID, `avt_` followed by 24 lowercase letters and digits.'), then: [other(`${AVATAR}: id`, 'documentation changed'), breaking(`${AVATAR}: id`, 'ID format documentation changed')] },
  { when: 'a response ID\'s description stops stating a format', base: (d) => (avatarId(d).description = 'The avatar ID, `av_` followed by 24 lowercase letters and digits.'), head: (d) => (avatarId(d).description = 'The avatar ID.'), then: [other(`${AVATAR}: id`, 'documentation changed'), breaking(`${AVATAR}: id`, 'ID format no longer documented')] },
  { when: 'a response ID\'s format is documented for the first time', head: (d) => (avatarId(d).description = 'The avatar ID, `av_` followed by 24 lowercase letters and digits.'), then: [other(`${AVATAR}: id`, 'documentation changed'), additive(`${AVATAR}: id`, 'ID format now documented')] },
  { when: 'a path ID\'s format is documented for the first time', head: (d) => (d.paths['/v1/avatars/{id}'].parameters[0].schema.description = '`av_` followed by 24 lowercase letters and digits.'), then: [other(`${GET_AVATAR} path parameter id`, 'documentation changed'), breaking(`${GET_AVATAR} path parameter id`, 'ID format now documented')] },
  { when: 'a response ID\'s description is reworded, its format kept', base: (d) => (avatarId(d).description = 'The avatar ID, `av_` followed by 24 lowercase letters and digits.'), head: (d) => (avatarId(d).description = 'Names the avatar: `av_` and then 24 lowercase letters and digits; see `404` for unknown ones.'), then: [other(`${AVATAR}: id`, 'documentation changed')] },
  { when: 'a member that is no ID changes what its description counts', base: (d) => (schemas(d).Avatar.properties.name.description = 'At most 24 letters.'), head: (d) => (schemas(d).Avatar.properties.name.description = 'At most 33 letters.'), then: [other(`${AVATAR}: name`, 'documentation changed')] },

  // Variants of a request body
  { when: 'a request variant is removed', head: (d) => schemas(d).AvatarCreateRequest.oneOf.pop(), then: [breaking(`${BODY}: [From a photo]`, 'request variant removed')] },
  { when: 'a request variant is added', head: (d) => schemas(d).AvatarCreateRequest.oneOf.push({ title: 'From props', type: 'object', required: ['type'], properties: { type: { type: 'string', const: 'props' } } }), then: [additive(`${BODY}: [From props]`, 'request variant added')] },
  { when: 'variants are retitled and reordered, matched by their discriminator value', head: (d) => {
    prompt(d).title = 'A prompt';
    schemas(d).PhotoAvatarCreateRequest.title = 'A photo';
    schemas(d).AvatarCreateRequest.oneOf.reverse();
  }, then: [other(`${BODY}: [A prompt]`, 'documentation changed'), other(`${BODY}: [A photo]`, 'documentation changed')] },

  // Outside /v1
  { when: 'a path outside /v1 breaks', head: (d) => delete d.paths['/health'].get.responses['200'].content['application/json'].schema.properties.ok, then: [other('GET /health 200 response: ok', 'response member removed')] },
];

describe('compareDocuments', () => {
  it.each(ROWS.map((row) => [row.when, row] as const))('when %s', (_when, row) => {
    const base = fixture();
    const head = fixture();
    row.base?.(base);
    row.head(head);

    const changes = compareDocuments(base, head);

    expect(changes.map(({ kind, where, rule }) => ({ kind, where, rule }))).toEqual(row.then);
  });

  it('when an optional response member is added, then that is the only change and it is additive', () => {
    const head = fixture();
    schemas(head).Avatar.properties.preview_url = { type: 'string' };

    expect(compareDocuments(fixture(), head)).toEqual([{ kind: 'additive', where: `${AVATAR}: preview_url`, rule: 'response member added' }]);
  });

  it('when only descriptions, summaries, examples and info change, then every change is other', () => {
    const head = fixture();
    head.info.description = 'Reworded.';
    head.paths['/v1/me'].get.summary = 'Your account';
    schemas(head).Avatar.description = 'An avatar, reworded.';
    head.components.examples.AvatarReady.value.name = 'Ada';

    const changes = compareDocuments(fixture(), head);

    expect(changes).toEqual([
      { kind: 'other', where: 'info', rule: 'info changed' },
      { kind: 'other', where: 'GET /v1/avatars/{id} 200 response', rule: 'documentation changed', detail: 'examples' },
      { kind: 'other', where: 'GET /v1/avatars/{id} 200 response', rule: 'documentation changed', detail: 'description' },
      { kind: 'other', where: 'GET /v1/me', rule: 'documentation changed', detail: 'summary' },
    ]);
  });

  it('when a change is outside /v1, then it says what it would have been', () => {
    const head = fixture();
    delete head.paths['/health'].get;

    expect(compareDocuments(fixture(), head)).toEqual([{ kind: 'other', where: 'GET /health', rule: 'operation removed', detail: 'outside /v1, not gated: would be breaking' }]);
  });

  it('when a request enum loses a value, then the detail names it', () => {
    const head = fixture();
    prompt(head).properties.style.enum = ['photo'];

    expect(compareDocuments(fixture(), head)[0]?.detail).toBe('"cartoon"');
  });

  it('when a $ref names a component with a "%" that starts no escape, then it is followed as written', () => {
    const base = fixture();
    const head = fixture();
    for (const doc of [base, head]) {
      schemas(doc)['Rate%'] = { type: 'string' };
      schemas(doc).Avatar.properties.rate = { $ref: '#/components/schemas/Rate%' };
    }
    schemas(head)['Rate%'] = { type: 'integer' };

    expect(compareDocuments(base, head).filter((c) => c.kind === 'breaking').map((c) => c.where)).toEqual([`${AVATAR}: rate`]);
  });

  it('when the bundle is compared with itself, then nothing changed', () => {
    expect(compareDocuments(loadBundle(), loadBundle())).toEqual([]);
  });
});

function renameMember(schema: Node, from: string, to: string): void {
  renameKey(schema.properties, from, to);
  schema.required = (schema.required ?? []).map((name: string) => (name === from ? to : name));
}

function addMember(schema: Node, name: string, member: Node, required: boolean): void {
  schema.properties[name] = member;
  if (required) schema.required.push(name);
}

function renameKey(object: Node, from: string, to: string): void {
  object[to] = object[from];
  delete object[from];
}

function renamePath(doc: Node, from: string, to: string, parameter: string): void {
  renameKey(doc.paths, from, to);
  doc.paths[to].parameters[0].name = parameter;
}

function addContentType(body: Node, type: string): void {
  body.content[type] = { schema: { type: 'object' } };
}
