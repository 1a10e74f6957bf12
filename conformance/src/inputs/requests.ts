// The requests a generated-input run sends, as fast-check arbitraries. Creates are
// built from the contract's request schemas: bodies that should pass, bodies that break
// one rule (the member and the rule named), JSON sent under another media type, and
// JSON cut short. Reads ask for IDs nobody was given. An implementation that made other
// choices gets the source's bodies in its own spelling (its profile), with members
// dropped or of the wrong type; what it answers is judged by the source's rules only.
import fc from 'fast-check';
import type { ContractValidator } from '../contract.ts';
import { truncate } from '../http.ts';
import { OpenApi } from '../implementation/openapi-document.ts';
import type { Json } from '../implementation/profile.ts';
import { isJson } from '../world.ts';
import type { Shape } from '../implementation/shape.ts';
import { SchemaArbitraries } from './schema-arbitraries.ts';

export type Operation = 'create-avatar' | 'create-video' | 'get-avatar' | 'get-video';

/**
 * What the contract makes of a generated request: valid (refused only for credits, or
 * for an avatar the account does not have), invalid (422 naming `member`), another
 * media type (415), not JSON (400), an ID the account was never given (404), or a read
 * with query parameters the operation does not take (422 naming one, ND-QUERY: the
 * request is checked before the record it names).
 */
export type Expectation = 'valid' | 'invalid' | 'media-type' | 'malformed' | 'unknown-id' | 'unknown-query';

export interface GeneratedRequest {
  operation: Operation;
  method: 'POST' | 'GET';
  path: string;
  /** The body as text, exactly as sent. */
  body?: string;
  contentType?: string;
  expect: Expectation;
  /** The member a 422 must name (dotted), when one rule of one member is broken. */
  member?: string;
  rule?: string;
  /** The query parameters of the request, none of which the operation takes; a 422 names one of them. */
  parameters?: string[];
}

export interface GeneratorDeps {
  validator: ContractValidator;
  shape: Shape;
  /** The contract's rules are in force: request schemas from the document, classified by its validator. */
  contract: boolean;
  /** A webhook URL the runner receives on, for valid bodies; none: they carry no webhook_url. */
  webhookUrl: string | undefined;
  photoUrl: string;
  /** IDs of another account's records (the run's jobs): this account must not see them. */
  foreignIds: { avatars: string[]; videos: string[] };
}

const CREATE_PATHS: Record<'create-avatar' | 'create-video', string> = { 'create-avatar': '/v1/avatars', 'create-video': '/v1/avatar-videos' };

export function createRequests(deps: GeneratorDeps): fc.Arbitrary<GeneratedRequest> {
  const doc = new OpenApi(deps.validator.document);
  const foreignAvatar = deps.foreignIds.avatars.length > 0 ? [fc.constantFrom(...deps.foreignIds.avatars)] : [];
  const arbitraries = new SchemaArbitraries(doc, {
    webhook_url: deps.webhookUrl === undefined ? undefined : fc.constant(deps.webhookUrl),
    url: fc.webSegment().map((segment) => `${deps.photoUrl}?v=${encodeURIComponent(segment)}`),
    // An avatar this account does not have: made up, or another account's.
    avatar_id: fc.oneof(fc.stringMatching(/^[A-Za-z0-9_-]{1,64}$/), ...foreignAvatar),
  });
  const bodies = (operation: 'create-avatar' | 'create-video') => {
    const schema = doc.jsonSchema(doc.resolve(doc.operation('post', CREATE_PATHS[operation])?.requestBody));
    const valid = arbitraries.valid(schema).map((value) => ({ value, member: undefined as string | undefined, rule: undefined as string | undefined }));
    const invalid = arbitraries.invalid(schema).map((broken) => ({ value: broken.value, member: broken.member || undefined, rule: broken.rule as string | undefined }));
    return fc.oneof({ weight: 2, arbitrary: valid }, { weight: 3, arbitrary: invalid }).map(({ value, member, rule }) => {
      const request = { operation, method: 'POST' as const, path: CREATE_PATHS[operation], body: JSON.stringify(spelled(deps, operation, value)), contentType: 'application/json' };
      return classify(deps, request, value, member, rule);
    });
  };
  const json = fc.oneof(bodies('create-avatar'), bodies('create-video'));
  return fc.oneof(
    { weight: 8, arbitrary: json },
    // The same JSON under a media type that is not JSON: the media type is checked first.
    { weight: 1, arbitrary: fc.tuple(json, fc.constantFrom('text/plain', 'application/x-www-form-urlencoded', 'application/xml', 'multipart/form-data; boundary=x')).map(([request, contentType]) => ({ ...request, contentType, expect: 'media-type' as const, member: undefined, rule: undefined })) },
    // JSON cut anywhere before its end is not JSON.
    { weight: 1, arbitrary: fc.tuple(json, fc.nat()).map(([request, cut]) => cutShort(deps, request, cut)) },
  );
}

export function readRequests(deps: GeneratorDeps): fc.Arbitrary<GeneratedRequest> {
  // Unreserved characters and letters beyond ASCII only: an encoded "/", "\\", "%" or ";"
  // is refused by many web stacks before the API sees it, which says nothing about the API.
  // "." and ".." are dot segments, taken out of the path by URL parsing: they would name another route.
  const letters = fc.string({ unit: fc.constantFrom('é', 'ß', 'ж', 'Ω', 'あ', '中', 'ø', '😀'), minLength: 1, maxLength: 12 });
  const made = fc
    .oneof(fc.stringMatching(/^[A-Za-z0-9._~-]{1,40}$/), letters, fc.uuid(), fc.stringMatching(/^(avt|vid|av)_[A-Za-z0-9]{1,30}$/))
    .filter((id) => id !== '.' && id !== '..');
  const id = (foreign: string[]) => (foreign.length > 0 ? fc.oneof(made, fc.constantFrom(...foreign)) : made);
  const query = fc.option(fc.webQueryParameters(), { nil: undefined });
  const read = (operation: 'get-avatar' | 'get-video', base: string, foreign: string[]) =>
    fc.tuple(id(foreign), query).map(([value, q]) => {
      const path = `${base}/${encodeURIComponent(value)}${q ? `?${q}` : ''}`;
      // The reads take no query parameter, so any the query holds is one too many; read
      // from the URL as sent (a query may itself begin with "?", which is then a name).
      const parameters = [...new URL(path, 'http://runner').searchParams.keys()];
      return { operation, method: 'GET' as const, path, ...(parameters.length > 0 ? { expect: 'unknown-query' as const, parameters } : { expect: 'unknown-id' as const }) };
    });
  return fc.oneof(read('get-avatar', '/v1/avatars', deps.foreignIds.avatars), read('get-video', '/v1/avatar-videos', deps.foreignIds.videos));
}

/** The body in the implementation's spelling: the contract's as it is, another's through its profile. */
function spelled(deps: GeneratorDeps, operation: 'create-avatar' | 'create-video', value: unknown): unknown {
  if (deps.contract || !isJson(value)) return value;
  if (operation === 'create-avatar') return deps.shape.avatarBody(value);
  // The template places the values as they are (a whole {{placeholder}} keeps a number a
  // number, and a missing one leaves its member out), so broken values stay broken.
  const { avatar_id, script, ...rest } = value;
  return { ...deps.shape.videoBody(avatar_id as string, script as string), ...rest };
}

/** The contract's validator decides, whatever the generator meant to make. */
function classify(deps: GeneratorDeps, request: Omit<GeneratedRequest, 'expect'>, value: unknown, member: string | undefined, rule: string | undefined): GeneratedRequest {
  const errors = deps.validator.validateRequest('POST', request.path, value) ?? [];
  if (errors.length === 0) return { ...request, expect: 'valid' };
  return { ...request, expect: 'invalid', ...(member === undefined ? {} : { member }), ...(rule === undefined ? {} : { rule }) };
}

/** The body cut short: not JSON any more, unless what is left still parses (`12` of `123`). */
function cutShort(deps: GeneratorDeps, request: GeneratedRequest, cut: number): GeneratedRequest {
  const text = request.body ?? '{}';
  // Never the whole text, never nothing: an empty body is its own case.
  const body = text.slice(0, 1 + (cut % Math.max(1, text.length - 1)));
  const { member: _member, rule: _rule, ...rest } = request;
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return { ...rest, body, expect: 'malformed' };
  }
  return classify(deps, { ...rest, body }, parsed, undefined, undefined);
}

/** The request as a reader replays it: method, path, media type and body (long bodies cut for reading). */
export function show(request: GeneratedRequest, maxBody = Infinity): string {
  const head = `${request.method} ${request.path}`;
  if (request.body === undefined) return head;
  return `${head}\nContent-Type: ${request.contentType ?? '(none)'}\n\n${truncate(request.body, maxBody)}`;
}


