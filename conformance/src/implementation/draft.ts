// Drafts an implementation profile from the implementation's own OpenAPI document, so a
// team starts from what its document already says instead of a blank file. Whatever the
// document tells (auth, success statuses, where the ID and the state are, the error
// code, what /v1/me shows, the event type) is read from it; whatever it cannot tell
// (prices, how to force a failure) or what was only guessed keeps the contract's choice
// and becomes a note, so a person reviews exactly those members before a run.
import { Document, isMap, isScalar, visit, type Pair } from 'yaml';
import { DocumentError, escape, isObject, normalizePath, OpenApi, type Member, type Schema } from './openapi-document.ts';
import { at, BALANCE_MEMBERS, CONTRACT_PROFILE, parseProfile, type Json } from './profile.ts';

export interface Draft {
  /** The profile in the file format (snake_case members); it always passes parseProfile. */
  profile: Json;
  /** What could not be found or was guessed, one line each, starting with the profile member. */
  notes: string[];
  /** The profile as YAML, with a header comment and a `# review:` comment at each noted member. */
  yaml: string;
}

/** The job's terminal states by the source's names; an implementation may spell them in any case. */
const READY = /^ready$/i;
const FAILED = /^failed$/i;
/** The source's event types (section 6.1): a member whose values include one is the event type. */
const EVENT_TYPES = ['avatar.ready', 'avatar.failed', 'avatar_video.ready', 'avatar_video.failed'];

const PRICES_NOTE = 'unknown, so the credit checks that compare amounts are skipped';
const FAILURE_NOTE =
  'how to make a job fail on purpose is not in an OpenAPI document: write failure.avatar / failure.video templates; left null, the failure checks cannot run, and the core verdict fails because they are required';
const CLOCK_NOTE = (method: string, path: string) =>
  `${method.toUpperCase()} ${path} looks like a sandbox clock (a path with "clock", a numeric "seconds" member): the checks of day and month windows and of the retry schedule move the account's time with it; make sure it moves only the calling sandbox account's time, or set clock to null`;

/** Notes on members, kept both as lines for the user and by member for the YAML comments. */
class Review {
  readonly lines: string[] = [];
  readonly byMember = new Map<string, string[]>();

  note(member: string, text: string): void {
    this.lines.push(`${member}: ${text}`);
    this.byMember.set(member, [...(this.byMember.get(member) ?? []), text]);
  }
}

/** Where a record is inside an answer: the answer itself, or one object member that has the id. */
interface RecordAt {
  prefix: string;
  record: Schema;
}

function recordIn(api: OpenApi, schema: Schema | undefined): RecordAt | undefined {
  if (!schema) return undefined;
  const properties = api.properties(schema);
  if (properties.has('id')) return { prefix: '', record: schema };
  const wrappers = [...properties].filter(([, value]) => api.properties(value).has('id'));
  const [only] = wrappers;
  return wrappers.length === 1 && only ? { prefix: `/${escape(only[0])}`, record: only[1] } : undefined;
}

/** The 2xx responses of an operation, their codes and the first JSON schema among them. */
function success(api: OpenApi, operation: Schema | undefined) {
  const ok = api.responses(operation).filter(([code]) => /^2\d\d$/.test(code));
  const statuses = ok.map(([code]) => Number(code));
  const withSchema = ok.find(([, response]) => api.jsonSchema(response));
  return { statuses, schema: withSchema ? api.jsonSchema(withSchema[1]) : undefined, responses: ok.map(([, response]) => response) };
}

function draftAuth(api: OpenApi, review: Review): Json {
  const fallback = { header: CONTRACT_PROFILE.auth.header, scheme: CONTRACT_PROFILE.auth.scheme };
  const schemes = api.resolve(api.resolve(api.doc.components)?.securitySchemes) ?? {};
  const used = usedSchemes(api).filter((name) => name in schemes);
  const names = used.length > 0 ? used : Object.keys(schemes);
  if (names.length === 0) {
    review.note('auth', 'the document names no security scheme; kept Authorization: Bearer <key>');
    return fallback;
  }
  if (used.length === 0) review.note('auth', `no security requirement names a scheme; drafted from ${names[0] ?? ''}, the first one defined`);
  const unsupported: string[] = [];
  for (const name of names) {
    const scheme = api.resolve(schemes[name]) ?? {};
    const auth = authOf(scheme);
    if (auth) {
      if (scheme.type === 'oauth2' || scheme.type === 'openIdConnect') review.note('auth', `${name} is ${scheme.type}: assumed its token is sent as Authorization: Bearer <key>`);
      return auth;
    }
    unsupported.push(`${name} (${describeScheme(scheme)})`);
  }
  review.note('auth', `unsupported: the runner sends the key in one header, alone or after a scheme word; ${unsupported.join(', ')} cannot be presented that way; kept Authorization: Bearer <key>`);
  return fallback;
}

/** The scheme names of the security requirements, of the document and of every operation. */
function usedSchemes(api: OpenApi): string[] {
  const requirements: unknown[] = Array.isArray(api.doc.security) ? [...(api.doc.security as unknown[])] : [];
  for (const item of Object.values(api.resolve(api.doc.paths) ?? {})) {
    for (const operation of Object.values(api.resolve(item) ?? {})) {
      const security = api.resolve(operation)?.security;
      if (Array.isArray(security)) requirements.push(...(security as unknown[]));
    }
  }
  return [...new Set(requirements.flatMap((requirement) => (isObject(requirement) ? Object.keys(requirement) : [])))];
}

function authOf(scheme: Schema): Json | undefined {
  const kind = typeof scheme.scheme === 'string' ? scheme.scheme.toLowerCase() : '';
  if (scheme.type === 'http' && kind === 'bearer') return { header: 'Authorization', scheme: 'Bearer' };
  if (scheme.type === 'apiKey' && scheme.in === 'header' && typeof scheme.name === 'string') return { header: scheme.name, scheme: null };
  // OAuth 2 and OpenID Connect tokens travel as bearer tokens (RFC 6750).
  if (scheme.type === 'oauth2' || scheme.type === 'openIdConnect') return { header: 'Authorization', scheme: 'Bearer' };
  return undefined;
}

function describeScheme(scheme: Schema): string {
  if (scheme.type === 'http') return `http ${String(scheme.scheme)}`;
  if (scheme.type === 'apiKey') return `apiKey in ${String(scheme.in)}`;
  return String(scheme.type);
}

/** Statuses and the ID's pointer of one create operation. */
function draftCreate(api: OpenApi, review: Review, member: 'create.avatar' | 'create.video', path: string): { statuses: number[]; id: string; record?: RecordAt } {
  const base = CONTRACT_PROFILE.create[member === 'create.avatar' ? 'avatar' : 'video'];
  const operation = api.operation('post', path);
  if (!operation) {
    review.note(member, `POST ${path} is not in the document; kept statuses ${JSON.stringify(base.statuses)} and id ${base.id}`);
    return { statuses: base.statuses, id: base.id };
  }
  const found = success(api, operation);
  let statuses = found.statuses;
  if (statuses.length === 0) {
    review.note(`${member}.statuses`, `POST ${path} documents no 2xx status; kept ${JSON.stringify(base.statuses)}`);
    statuses = base.statuses;
  }
  const record = recordIn(api, found.schema);
  if (!record) review.note(`${member}.id`, `no id member found in the success answer of POST ${path}; kept ${base.id}`);
  return { statuses, id: record ? `${record.prefix}/id` : base.id, ...(record ? { record } : {}) };
}

/** The video request template: the document's own names for the avatar and the script. */
function draftVideoBody(api: OpenApi, review: Review): Json {
  const fallback = CONTRACT_PROFILE.create.video.body;
  const request = api.jsonSchema(api.resolve(api.operation('post', '/v1/avatar-videos'))?.requestBody);
  const properties = [...api.properties(request)];
  const webhook = (name: string) => /webhook|callback/i.test(name);
  const avatar =
    properties.find(([name]) => /avatar/i.test(name) && /id/i.test(name) && !webhook(name)) ??
    properties.find(([name, schema]) => /avatar/i.test(name) && api.isString(schema) && !webhook(name));
  if (!avatar) {
    review.note('create.video.body', 'no member naming the avatar (avatar_id, avatarId, avatar) in the request of POST /v1/avatar-videos; kept {avatar_id, script}');
    return fallback;
  }
  const body: Json = { [avatar[0]]: '{{avatar_id}}' };
  const text = properties.find(([name, schema]) => name !== avatar[0] && !webhook(name) && /script|text|transcript|input|speech|prompt/i.test(name) && api.isString(schema));
  if (text) body[text[0]] = '{{script}}';
  else review.note('create.video.body', 'no member for the script (script, text, transcript, input, speech, prompt) in the request of POST /v1/avatar-videos; add the one the avatar speaks');
  // webhook_url is the source's own name and the runner adds it; any other name needs the placeholder.
  const hook = properties.find(([name]) => webhook(name) && name !== 'webhook_url');
  if (hook) body[hook[0]] = '{{webhook_url}}';
  for (const name of api.required(request)) {
    if (!(name in body) && name !== 'webhook_url') review.note('create.video.body', `${name} is required by the document and cannot be guessed: add a value for it`);
  }
  return body;
}

interface StatusDraft {
  status: string;
  states: { pending: string[]; ready: string; failed: string };
}

/** The member whose allowed values include both terminal states, and the states it names. */
function statusIn(api: OpenApi, at: RecordAt): StatusDraft | undefined {
  for (const member of api.members(at.record, 2)) {
    const names = api.values(member.schema).filter((value): value is string => typeof value === 'string');
    const ready = names.find((name) => READY.test(name));
    const failed = names.find((name) => FAILED.test(name));
    if (ready && failed) {
      const pending = [...new Set(names.filter((name) => name !== ready && name !== failed))];
      return { status: `${at.prefix}${member.pointer}`, states: { pending, ready, failed } };
    }
  }
  return undefined;
}

/** The record as GET shows it, or else as the create answer shows it. */
function recordOf(api: OpenApi, review: Review, getPath: string, created: RecordAt | undefined): RecordAt | undefined {
  const shown = recordIn(api, success(api, api.operation('get', getPath)).schema);
  if (!shown && created) review.note('records.status', `GET ${getPath.replace('{}', '{id}')} documents no record with an id; read the record of the create answer instead`);
  return shown ?? created;
}

function draftRecords(api: OpenApi, review: Review, avatar: RecordAt | undefined, video: RecordAt | undefined): Json {
  const base = CONTRACT_PROFILE.records;
  const found = avatar ? statusIn(api, avatar) : undefined;
  if (!found) review.note('records.status', `no member of the avatar record allows both ready and failed; kept ${base.status} with states ${JSON.stringify(base.states)}`);
  let states = found?.states ?? base.states;
  if (found?.states.pending.length === 0) {
    review.note('records.states.pending', `${found.status} names no state besides ${found.states.ready} and ${found.states.failed}; kept ${JSON.stringify(base.states.pending)}`);
    states = { ...found.states, pending: base.states.pending };
  }
  const forVideo = video ? statusIn(api, video) : undefined;
  if (found && (forVideo?.status !== found.status || JSON.stringify(forVideo.states) !== JSON.stringify(found.states))) {
    const seen = forVideo ? `${forVideo.status} with ${JSON.stringify(forVideo.states)}` : 'no such member';
    review.note('records.status', `the video record differs from the avatar record (${seen}); one profile reads both the same way`);
  }
  const credits = avatar ? api.members(avatar.record, 1).find((member) => /^(credits?|cost|price|charged)$/i.test(member.name) && api.isNumber(member.schema)) : undefined;
  return { status: found?.status ?? base.status, states, credits: credits && avatar ? `${avatar.prefix}${credits.pointer}` : null };
}

/** Error bodies: the 4xx answers' schemas, or schemas named like an error when none is documented. */
function errorSchemas(api: OpenApi): Schema[] {
  const schemas = new Set<Schema>();
  for (const item of Object.values(api.resolve(api.doc.paths) ?? {})) {
    for (const operation of Object.values(api.resolve(item) ?? {})) {
      for (const [code, response] of api.responses(api.resolve(operation))) {
        const schema = /^4(\d\d|XX)$/i.test(code) ? api.jsonSchema(response) : undefined;
        if (schema) schemas.add(schema);
      }
    }
  }
  if (schemas.size > 0) return [...schemas];
  return schemasNamed(api, /error|problem/i);
}

/** The component schemas whose names match. */
function schemasNamed(api: OpenApi, pattern: RegExp): Schema[] {
  const components = api.resolve(api.resolve(api.doc.components)?.schemas) ?? {};
  return Object.entries(components).flatMap(([name, schema]) => {
    const resolved = pattern.test(name) ? api.resolve(schema) : undefined;
    return resolved ? [resolved] : [];
  });
}

const CODE_NAMES = ['code', 'type', 'error_code', 'reason'];
/** A header that names an error's code or problem type. */
const CODE_HEADER = /^(x-)?(error|problem)[-_]?(code|type)$/i;

/** Where one error body carries its code, in the profile's file format; undefined when not found. */
function codeIn(api: OpenApi, schema: Schema): Json | string | undefined {
  // A URI (RFC 9457's type) names a problem page: its last segment is the code.
  const isUri = (value: Schema) => typeof value.format === 'string' && value.format.startsWith('uri');
  const isCode = (value: Schema | undefined) => value !== undefined && api.isString(value) && !isUri(value);
  const top = api.properties(schema);
  const [wrapper, inner] = [...top].find(([name]) => /^error$/i.test(name)) ?? [];
  const nested = wrapper ? api.properties(inner) : new Map<string, Schema>();
  const at = (prefix: string, members: Map<string, Schema>, test: (value: Schema | undefined) => boolean) => {
    const name = CODE_NAMES.find((candidate) => test(members.get(candidate)));
    return name === undefined ? undefined : `${prefix}/${name}`;
  };
  // The code itself first, top level before inside an `error` object; a URI only then.
  const plain = at('', top, isCode) ?? (wrapper ? at(`/${escape(wrapper)}`, nested, isCode) : undefined);
  if (plain) return plain;
  const uri = (value: Schema | undefined) => value !== undefined && isUri(value);
  const pointer = at('', top, uri) ?? (wrapper ? at(`/${escape(wrapper)}`, nested, uri) : undefined);
  return pointer ? { pointer, form: 'uri' } : undefined;
}

/** A response header of an error answer that names its code or problem type. */
function codeHeader(api: OpenApi): Json | undefined {
  for (const item of Object.values(api.resolve(api.doc.paths) ?? {})) {
    for (const operation of Object.values(api.resolve(item) ?? {})) {
      for (const [code, response] of api.responses(api.resolve(operation))) {
        if (!/^4(\d\d|XX)$/i.test(code)) continue;
        for (const [name, header] of Object.entries(api.resolve(response.headers) ?? {})) {
          if (!CODE_HEADER.test(name)) continue;
          const schema = api.resolve(api.resolve(header)?.schema) ?? {};
          return { header: name, form: typeof schema.format === 'string' && schema.format.startsWith('uri') ? 'uri' : 'value' };
        }
      }
    }
  }
  return undefined;
}

function draftErrors(api: OpenApi, review: Review): Json {
  const found = dedupe(errorSchemas(api).map((schema) => codeIn(api, schema)).filter((code) => code !== undefined));
  // The body first: a header is where a code is sought only when no body carries one.
  const codes = found.length > 0 ? found : [codeHeader(api)].filter((code) => code !== undefined);
  const describe = (code: Json | string) => (typeof code === 'string' ? code : 'header' in code ? `header ${String(code.header)}` : `the URI at ${String(code.pointer)}`);
  if (codes.length === 0) review.note('errors.code', 'no code, type, error_code or reason member in the documented error bodies, and no error-code header; null: the runner looks for the code as a whole word anywhere in the body');
  if (codes.length > 1) review.note('errors.code', `the error bodies carry their code in different places (${codes.map(describe).join(', ')}); drafted the first`);
  const [first] = codes;
  if (first !== undefined && typeof first !== 'string') {
    review.note('errors.code', 'header' in first ? `the code is read from the ${String(first.header)} header of error answers; check that it holds the code${first.form === 'uri' ? ' as the last segment of a URI' : ''}` : `${String(first.pointer)} is a URI (RFC 9457's type): its last segment is taken as the code, e.g. https://errors.example/insufficient_credits; check that it ends in the code`);
  }
  const documented = api.responses(api.operation('post', '/v1/avatars')).map(([code]) => Number(code));
  let validation = [400, 422].filter((status) => documented.includes(status));
  if (validation.length === 0) {
    review.note('errors.validation', 'POST /v1/avatars documents neither 400 nor 422; kept [400, 422]');
    validation = CONTRACT_PROFILE.errors.validation;
  }
  return { code: first ?? null, validation };
}

function hasNumbers(api: OpenApi, schema: Schema, names: string[]): boolean {
  const properties = api.properties(schema);
  return names.every((name) => properties.has(name) && api.isNumber(properties.get(name)));
}

function pointers(prefix: string, names: string[]): Record<string, string> {
  return Object.fromEntries(names.map((name) => [name, `${prefix}/${escape(name)}`]));
}

function draftAccount(api: OpenApi, review: Review): Json {
  const schema = success(api, api.operation('get', '/v1/me')).schema;
  if (!schema) {
    review.note('account', 'GET /v1/me has no documented JSON answer; the account checks that read it are skipped');
    return { id: null, credits: null, generation_windows: [] };
  }
  const everything: Member[] = [{ pointer: '', name: '', schema }, ...api.members(schema, 3)];
  const id = everything.find((member) => /^(account_?id|account|workspace(_?id)?|owner(_?id)?)$/i.test(member.name));
  let idPointer: string | null = null;
  // `account` may be an object of its own; its id is then the account's ID.
  if (id) idPointer = api.isString(id.schema) ? id.pointer : api.properties(id.schema).has('id') ? `${id.pointer}/id` : null;
  if (!idPointer) review.note('account.id', 'no account or workspace ID found in GET /v1/me; null: checks that tell two accounts apart are skipped');

  // The object showing the most of available, reserved and used; a balance shown in part
  // is still judged in that part.
  const shownIn = (member: Member) => BALANCE_MEMBERS.filter((name) => hasNumbers(api, member.schema, [name]));
  const balance = everything.map((member) => ({ member, shown: shownIn(member) })).reduce<{ member: Member; shown: string[] } | undefined>((best, candidate) => (candidate.shown.length > (best?.shown.length ?? 0) ? candidate : best), undefined);
  if (!balance) review.note('account.credits', 'GET /v1/me shows no balance with available, reserved or used; null: the credit checks that need one are not applicable');
  else if (balance.shown.length < BALANCE_MEMBERS.length) {
    const missing = BALANCE_MEMBERS.filter((name) => !balance.shown.includes(name));
    review.note('account.credits', `GET /v1/me shows ${balance.shown.join(' and ')} but not ${missing.join(' or ')}: the credit checks judge what is shown, and those that need ${missing.join(' or ')} are not applicable`);
  }

  const windows = everything
    .filter((member) => /generat/i.test(member.name))
    .flatMap((generation) => [generation, ...api.members(generation.schema, 2).map((inner) => ({ ...inner, pointer: `${generation.pointer}${inner.pointer}` }))])
    .filter((member) => hasNumbers(api, member.schema, ['limit', 'remaining', 'reset']))
    .map((member) => pointers(member.pointer, ['limit', 'remaining', 'reset']));
  return { id: idPointer, credits: balance ? pointers(balance.member.pointer, balance.shown) : null, generation_windows: dedupe(windows) };
}

/** Distinct by content: a window found both as itself and inside its parent counts once. */
function dedupe<T>(items: T[]): T[] {
  return [...new Map(items.map((item) => [JSON.stringify(item), item])).values()];
}

/** The event bodies: OpenAPI 3.1 webhooks first, then schemas named like events. */
function eventSources(api: OpenApi): { bodies: Schema[]; headers: [string, Schema][] } {
  const bodies: Schema[] = [];
  const headers: [string, Schema][] = [];
  for (const item of Object.values(api.resolve(api.doc.webhooks) ?? {})) {
    for (const operation of Object.values(api.resolve(item) ?? {})) {
      const resolved = api.resolve(operation);
      const body = api.jsonSchema(api.resolve(resolved?.requestBody));
      if (body) bodies.push(body);
      for (const parameter of Array.isArray(resolved?.parameters) ? resolved.parameters : []) {
        const header = api.resolve(parameter);
        if (header?.in === 'header' && typeof header.name === 'string') headers.push([header.name, api.resolve(header.schema) ?? {}]);
      }
    }
  }
  return { bodies: [...bodies, ...schemasNamed(api, /event|webhook/i)], headers };
}

function draftEvents(api: OpenApi, review: Review): Json {
  const namesEvent = (schema: Schema) => api.values(schema).some((value) => typeof value === 'string' && EVENT_TYPES.includes(value));
  const { bodies, headers } = eventSources(api);
  for (const body of bodies) {
    const member = api.members(body, 2).find((candidate) => namesEvent(candidate.schema));
    if (member) return { type: member.pointer };
  }
  const header = headers.find(([, schema]) => namesEvent(schema));
  if (header) return { type: { header: header[0] } };
  review.note('events.type', 'no webhook body or header lists avatar.ready among its values; kept /type');
  return { type: '/type' };
}

const PRICE_EXTENSION = /^x-(credit-?costs?|credits?|costs?|prices?)$/i;

type Kind = 'avatar' | 'avatar_video';
const CREATE_PATHS: Record<Kind, string> = { avatar: '/v1/avatars', avatar_video: '/v1/avatar-videos' };

/** A price stated by an extension on the create operation (x-credit-cost and the like). */
function statedPrice(api: OpenApi, kind: Kind): number | undefined {
  const operation = api.operation('post', CREATE_PATHS[kind]) ?? {};
  const key = Object.keys(operation).find((name) => PRICE_EXTENSION.test(name));
  return key === undefined ? undefined : price(operation[key]);
}

/** The price the create answer's examples show in the record's price member, when they agree. */
function shownPrice(api: OpenApi, kind: Kind, creditsInRecord: string | undefined, created: RecordAt | undefined): number | undefined {
  if (creditsInRecord === undefined || !created) return undefined;
  const responses = success(api, api.operation('post', CREATE_PATHS[kind])).responses;
  const values = new Set(responses.flatMap((response) => api.examples(response).map((example) => price(at(example, `${created.prefix}${creditsInRecord}`)))));
  const [only] = values;
  return values.size === 1 ? only : undefined;
}

/**
 * Prices stated by an extension on each create operation; else the ones the create
 * answers' examples show in the record's price member, flagged for review because an
 * example only illustrates.
 */
function draftPrices(api: OpenApi, review: Review, creditsInRecord: string | undefined, created: Record<Kind, RecordAt | undefined>): Json | null {
  const stated = { avatar: statedPrice(api, 'avatar'), avatar_video: statedPrice(api, 'avatar_video') };
  if (stated.avatar !== undefined && stated.avatar_video !== undefined) return stated;
  const shown = {
    avatar: stated.avatar ?? shownPrice(api, 'avatar', creditsInRecord, created.avatar),
    avatar_video: stated.avatar_video ?? shownPrice(api, 'avatar_video', creditsInRecord, created.avatar_video),
  };
  if (shown.avatar !== undefined && shown.avatar_video !== undefined) {
    review.note('prices', `read from the create answers' examples (avatar ${shown.avatar}, avatar_video ${shown.avatar_video}); confirm they are the real prices`);
    return shown;
  }
  review.note('prices', PRICES_NOTE);
  return null;
}

function price(value: unknown): number | undefined {
  const amount = isObject(value) ? (value.credits ?? value.amount) : value;
  return typeof amount === 'number' && Number.isInteger(amount) && amount >= 0 ? amount : undefined;
}

/** Drafts a profile (file format) from an OpenAPI 3 document, with notes on what to review. */
export function draftProfile(document: unknown, options: { name?: string } = {}): Draft {
  if (!isObject(document)) throw new DocumentError('the document is not an object: not an OpenAPI document');
  if ('swagger' in document) throw new DocumentError('the document is Swagger 2.0: convert it to OpenAPI 3 first');
  if (!isObject(document.paths)) throw new DocumentError('the document has no paths: not an OpenAPI document');
  const api = new OpenApi(document);
  const review = new Review();
  const info = api.resolve(document.info);
  const name = options.name ?? (typeof info?.title === 'string' && info.title.trim() ? info.title : undefined);
  if (!name) review.note('name', 'the document has no info.title; name the implementation');

  const avatar = draftCreate(api, review, 'create.avatar', '/v1/avatars');
  const video = draftCreate(api, review, 'create.video', '/v1/avatar-videos');
  const body = draftVideoBody(api, review);
  const avatarRecord = recordOf(api, review, '/v1/avatars/{}', avatar.record);
  const records = draftRecords(api, review, avatarRecord, recordOf(api, review, '/v1/avatar-videos/{}', video.record));
  // The price member relative to the record, to be read in the create answers' examples.
  const creditsInRecord = typeof records.credits === 'string' && avatarRecord ? records.credits.slice(avatarRecord.prefix.length) : undefined;
  const profile: Json = {
    profile: 1,
    ...(name ? { name } : {}),
    auth: draftAuth(api, review),
    create: { avatar: { statuses: avatar.statuses, id: avatar.id }, video: { statuses: video.statuses, id: video.id, body } },
    records,
    errors: draftErrors(api, review),
    account: draftAccount(api, review),
    events: draftEvents(api, review),
    prices: draftPrices(api, review, creditsInRecord, { avatar: avatar.record, avatar_video: video.record }),
    failure: null,
    ...draftClock(api, review),
    ...draftIdempotency(api, review),
    ...draftLists(api, review),
    ...draftWebhookLog(api, review),
    ...draftRateLimits(api, review),
  };
  review.note('failure', FAILURE_NOTE);
  // A draft that the runner would refuse is a bug here, not the user's to find.
  parseProfile(profile, 'the drafted profile');
  return { profile, notes: review.lines, yaml: toYaml(profile, review, describe(info)) };
}

/**
 * A sandbox clock, if the document has an operation that looks like one: a POST, PUT or
 * PATCH on a path that names a clock, whose JSON body has a numeric `seconds` member.
 * Only a guess from names, so always a note; none found leaves clock out (no clock).
 */
function draftClock(api: OpenApi, review: Review): { clock?: Json } {
  const paths = api.resolve(api.doc.paths) ?? {};
  for (const [path, item] of Object.entries(paths)) {
    if (!/clock/i.test(path)) continue;
    for (const method of ['post', 'put', 'patch'] as const) {
      const operation = api.resolve(api.resolve(item)?.[method]);
      const seconds = api.properties(api.jsonSchema(api.resolve(operation?.requestBody))).get('seconds');
      if (!seconds || !api.isNumber(seconds)) continue;
      review.note('clock', CLOCK_NOTE(method, path));
      return { clock: { advance: { method: method.toUpperCase(), path, body: { seconds: '{{seconds}}' } } } };
    }
  }
  return {};
}

/**
 * Idempotency keys, if the avatar create takes a header named like one; the header a
 * success carries to mark a replay, if one is named like that. Which statuses refuse a
 * key reused with another body is not in a document's names: the runner's default.
 */
function draftIdempotency(api: OpenApi, review: Review): { idempotency?: Json } {
  const operation = api.operation('post', '/v1/avatars');
  const parameters = Array.isArray(operation?.parameters) ? operation.parameters : [];
  const header = parameters.map((parameter) => api.resolve(parameter)).find((p) => p?.in === 'header' && typeof p.name === 'string' && /idempot/i.test(p.name));
  if (!header) return {};
  const successHeaders = api.responses(operation).filter(([code]) => code.startsWith('2')).flatMap(([, response]) => Object.keys(api.resolve(response.headers) ?? {}));
  const replayed = successHeaders.find((name) => /replay/i.test(name)) ?? null;
  review.note('idempotency', `the creates take ${String(header.name)}: a create sent again with it is expected to answer the first answer${replayed ? ` marked by ${replayed}` : ''}, and the key with another body to be refused with 400, 409 or 422 (set idempotency.reused to what the implementation answers)`);
  return { idempotency: { header: header.name, replayed_header: replayed } };
}

/**
 * Lists, if GET /v1/avatars and GET /v1/avatar-videos both take a page size and a cursor
 * named like ones and answer an array of records with a member holding the next cursor.
 * Only a guess from names, so always a note.
 */
function draftLists(api: OpenApi, review: Review): { lists?: Json } {
  const avatars = listOf(api, '/v1/avatars');
  const videos = listOf(api, '/v1/avatar-videos');
  if (!avatars || !videos) return {};
  if (JSON.stringify(avatars) !== JSON.stringify(videos)) review.note('lists', `GET /v1/avatar-videos pages otherwise than GET /v1/avatars (${JSON.stringify(videos)}); one profile reads both the same way: drafted from the avatars`);
  review.note('lists', `the lists take ${String(avatars.limit)} and ${String(avatars.cursor)}: each page's records are expected at ${String(avatars.data)} and the next page's cursor at ${String(avatars.next)}, absent or null on the last page`);
  return { lists: avatars };
}

const PAGE_SIZE = /^(limit|page_?size|per_?page|max_?results)$/i;
const CURSOR = /cursor|^after$|starting_?after|page_?token/i;

/** How one list operation pages, in the profile's terms; undefined when one of them is not found. */
function listOf(api: OpenApi, path: string): Json | undefined {
  const operation = api.operation('get', path);
  if (!operation) return undefined;
  const parameters = (Array.isArray(operation.parameters) ? operation.parameters : []).map((parameter) => api.resolve(parameter)).filter((p) => p?.in === 'query' && typeof p.name === 'string');
  const limit = parameters.find((p) => PAGE_SIZE.test(String(p!.name)))?.name;
  const cursor = parameters.find((p) => CURSOR.test(String(p!.name)))?.name;
  const members = [...api.properties(success(api, operation).schema)];
  const data = members.find(([, schema]) => api.types(schema).includes('array'));
  const next = members.find(([name, schema]) => /next|cursor/i.test(name) && api.isString(schema));
  if (typeof limit !== 'string' || typeof cursor !== 'string' || !data || !next) return undefined;
  return { limit, cursor, data: `/${escape(data[0])}`, next: `/${escape(next[0])}` };
}

const REPLAY = /^\/(replay|resend|redeliver|retry)$/i;

/**
 * A delivery log of webhook events, if the document has a GET of one event (a path that
 * names webhooks and ends in a parameter) beside a POST that replays it (the same path
 * and /replay, /resend, ...), whose answer has an array of attempts. Only a guess from
 * names, so always a note.
 */
function draftWebhookLog(api: OpenApi, review: Review): { webhook_log?: Json } {
  const paths = Object.keys(api.resolve(api.doc.paths) ?? {});
  for (const path of paths) {
    if (!/webhook/i.test(path) || !/\/\{[^}]+\}$/.test(path) || !api.operation('get', path)) continue;
    const replay = paths.find((other) => other.startsWith(`${path}/`) && REPLAY.test(other.slice(path.length)) && api.operation('post', other));
    if (!replay) continue;
    const event = success(api, api.operation('get', path)).schema;
    const attempts = [...api.properties(event)].find(([name, schema]) => /attempt/i.test(name) && api.types(schema).includes('array'));
    if (!attempts) continue;
    const members = [...api.properties(api.resolve(attempts[1].items))];
    const status = members.find(([name, schema]) => /status/i.test(name) && api.isNumber(schema));
    const succeeded = members.find(([, schema]) => api.types(schema).includes('boolean'));
    if (!status || !succeeded) continue;
    const trigger = members
      .map(([name, schema]) => [name, api.values(schema).find((value) => typeof value === 'string' && /replay|resend|manual/i.test(value))] as const)
      .find(([, value]) => value !== undefined);
    const statuses = success(api, api.operation('post', replay)).statuses;
    const withId = (template: string) => template.replace(/\{[^}]+\}/g, '{id}');
    review.note(
      'webhook_log',
      `GET ${path} and POST ${replay} look like a delivery log with a replay: the event's attempts are expected at /${attempts[0]}, a replayed event to arrive again with its event ID and a fresh timestamp and signature; check that the replay takes no body`,
    );
    return {
      webhook_log: {
        event: withId(path),
        replay: withId(replay),
        ...(statuses.length > 0 ? { replay_statuses: statuses } : {}),
        attempts: `/${escape(attempts[0])}`,
        status_code: `/${escape(status[0])}`,
        succeeded: `/${escape(succeeded[0])}`,
        trigger: trigger ? { pointer: `/${escape(trigger[0])}`, replay: trigger[1] } : null,
      },
    };
  }
  return {};
}

/** The structured fields of the IETF RateLimit draft, by the names every revision gives them. */
const STRUCTURED_RATE_LIMIT_FIELDS = /^ratelimit(-policy)?$/i;

/**
 * The IETF draft's structured rate-limit fields, if some answer of the document carries a
 * RateLimit-Policy or RateLimit header. The names alone do not tell the revision: drafted
 * as the contract's, the newest the runner reads (10 and 11 write the fields alike), and
 * always a note.
 */
function draftRateLimits(api: OpenApi, review: Review): { rate_limits?: Json } {
  const found = new Set<string>();
  for (const item of Object.values(api.resolve(api.doc.paths) ?? {})) {
    for (const operation of Object.values(api.resolve(item) ?? {})) {
      for (const [, response] of api.responses(api.resolve(operation))) {
        for (const name of Object.keys(api.resolve(response.headers) ?? {})) if (STRUCTURED_RATE_LIMIT_FIELDS.test(name)) found.add(name);
      }
    }
  }
  if (found.size === 0) return {};
  review.note(
    'rate_limits',
    `answers carry ${[...found].sort().join(' and ')}: drafted as the IETF draft's revision 11, which writes them as revision 10 did (RateLimit-Policy: "minute";q=120;w=60, RateLimit: "minute";r=119;t=42), which rate-limits.structured-fields-agree then judges against RateLimit-Limit, -Remaining and -Reset; if they follow an earlier revision (RateLimit-Policy: 120;w=60), set fields to null and they are not judged`,
  );
  return { rate_limits: { fields: 'ietf-draft-11' } };
}

function describe(info: Schema | undefined): string {
  const title = typeof info?.title === 'string' ? `"${info.title}"` : 'an untitled document';
  return typeof info?.version === 'string' ? `${title} version ${info.version}` : title;
}

function toYaml(profile: Json, review: Review, source: string): string {
  const doc = new Document(profile);
  doc.commentBefore = [
    ` Implementation profile drafted by draft-profile from the OpenAPI document ${source}.`,
    ' Members marked "review:" were guessed or not found in the document: check them',
    ' against the implementation, then run it with',
    '   npm run conformance -- --implementation <this file> ...',
  ].join('\n');
  // Short lists (statuses, states) read better on one line.
  visit(doc, { Seq: (_, node) => void (node.flow = node.items.every((item) => isScalar(item))) });
  for (const [member, texts] of review.byMember) {
    const pair = pairAt(doc, member.split('.'));
    if (!pair || !isScalar(pair.key)) continue;
    const comment = texts.map((text) => ` review: ${text}`).join('\n');
    pair.key.commentBefore = pair.key.commentBefore ? `${pair.key.commentBefore}\n${comment}` : comment;
  }
  return doc.toString({ lineWidth: 0, flowCollectionPadding: false });
}

/** The pair of the deepest member of the path that exists, so a note always lands somewhere. */
function pairAt(doc: Document, path: string[]): Pair | undefined {
  let node: unknown = doc.contents;
  let found: Pair | undefined;
  for (const key of path) {
    if (!isMap(node)) break;
    const pair = node.items.find((item) => isScalar(item.key) && item.key.value === key);
    if (!pair) break;
    found = pair;
    node = pair.value;
  }
  return found;
}
