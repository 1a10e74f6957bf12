// The mock answers hostile and odd requests as the server does: one table of requests
// (wrong methods, HEAD, odd media types and bodies, bad IDs and queries, odd keys and
// idempotency keys, byte ranges, unknown and oddly spelled paths) sent to a server
// listening on port 0 and to the sandbox's handlers in msw/node, in the same process.
// Each pair of answers is compared on what a client acts on: the status, the problem's
// code and broken rules, and the headers that matter.
import { setupServer } from 'msw/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FILE_LINKS } from '../../contract/numbers.ts';
import type { GenerationEngine } from '../../server/src/domain/engine.ts';
import type { VideoInput } from '../../server/src/domain/model.ts';
import { videoDurationSeconds } from '../../server/src/engine/timeline.ts';
import { GENEROUS_PLAN, startTestService, type TestService } from '../../server/test/support/harness.ts';
import { placeholderFiles } from '../src/placeholders.ts';
import { createSandbox, type MockedService } from '../src/index.ts';

/**
 * Where the sandbox answers: a port of the loopback that fetch refuses to reach (9, on its
 * list of bad ports), so a request the handlers let through is sent nowhere and fails.
 */
const SANDBOX_URL = 'http://127.0.0.1:9';

/** The records and keys each side's requests name: made alike on both, their IDs differ. */
interface Fixture {
  /** A sandbox key with room for every request of the table. */
  key: string;
  /** Another account's key: the first one's records are not its own. */
  stranger: string;
  /** A key whose plan admits nothing: every request of it to a route is 429. */
  spent: string;
  /** A key of an account without credits: a create it sends is 402. */
  poor: string;
  /** A key for the moves of the sandbox clock, which change its account's time. */
  clock: string;
  avatar: string;
  video: string;
  /** The ETag of the avatar's preview, whose bytes (a colour of its ID) differ between the two. */
  previewTag: string;
  /** The avatar's preview_image_url as a read gives it (path and query): signed, valid (ND-FILE-LINKS). */
  link: string;
  /** A preview link of another account's avatar, read before that account's clock moved past its lifetime. */
  expiredLink: string;
}

interface Sent {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string | Uint8Array;
}

type Case = [name: string, request: (f: Fixture) => Sent];

/** A value of the table, given as is or made from the side's fixture. */
type Of<T> = T | ((f: Fixture) => T);
const at = <T>(value: Of<T>, f: Fixture): T => (typeof value === 'function' ? (value as (f: Fixture) => T)(f) : value);

interface Options {
  /** The key sent as Bearer: the fixture's main key unless given; null sends no Authorization. */
  as?: (f: Fixture) => string | null;
  headers?: Of<Record<string, string>>;
  body?: Of<string | Uint8Array>;
}

const bearer = (key: string) => ({ Authorization: `Bearer ${key}` });
const request = (method: string, path: Of<string>, o: Options = {}) => (f: Fixture): Sent => {
  const key = o.as ? o.as(f) : f.key;
  return { method, path: at(path, f), headers: { ...(key ? bearer(key) : {}), ...at(o.headers ?? {}, f) }, body: o.body === undefined ? undefined : at(o.body, f) };
};
const noKey = () => null;
const json = { 'Content-Type': 'application/json' };
const get = (path: Of<string>, o: Options = {}) => request('GET', path, o);
/** A create of an avatar: JSON unless other headers are given. */
const createAvatar = (body: Of<string | Uint8Array>, headers: Record<string, string> = json) => request('POST', '/v1/avatars', { body, headers });
const createVideo = (body: Of<string>, headers: Record<string, string> = json) => request('POST', '/v1/avatar-videos', { body, headers });
/** A move of the sandbox clock, by the key kept for them. */
const advance = (body: string) => request('POST', '/v1/test_helpers/clock/advance', { as: (f) => f.clock, body, headers: json });
/** A request for a file: no key, as a page's <img> or <video> sends it. */
const file = (path: Of<string>, headers: Record<string, string> = {}, method = 'GET') => request(method, path, { as: noKey, headers });

const avatarBody = (name = 'Maya') => JSON.stringify({ type: 'prompt', name, prompt: 'A smiling woman in a bright kitchen' });
const videoBody = (avatar: string, script = 'Hello from both sides.') => JSON.stringify({ avatar_id: avatar, script });
const utf8 = (text: string) => new TextEncoder().encode(text);
const preview = (f: Fixture) => `/files/${f.avatar}/preview.png`;
const captions = (f: Fixture) => `/files/${f.video}/captions.vtt`;

const UNKNOWN_AVATAR = `av_${'0'.repeat(9)}${'a'.repeat(24)}`;
const UNKNOWN_VIDEO = `vid_${'0'.repeat(9)}${'a'.repeat(24)}`;
const UNKNOWN_EVENT = `evt_${'0'.repeat(32)}`;
const UNKNOWN_KEY = 'sk_test_nobody_at_all_here';
const nested = (depth: number) => `{"type":"prompt","name":"Deep","prompt":"x","extra":${'['.repeat(depth)}${']'.repeat(depth)}}`;

/** The paths of the server's routes, with the methods each takes. */
const KNOWN: [name: string, path: Of<string>, methods: string[]][] = [
  ['/v1/avatars', '/v1/avatars', ['GET', 'POST']],
  ['/v1/avatars/{id}', (f) => `/v1/avatars/${f.avatar}`, ['GET']],
  ['/v1/avatar-videos', '/v1/avatar-videos', ['GET', 'POST']],
  ['/v1/avatar-videos/{id}', (f) => `/v1/avatar-videos/${f.video}`, ['GET']],
  ['/v1/me', '/v1/me', ['GET']],
  ['/v1/webhook-events', '/v1/webhook-events', ['GET']],
  ['/v1/webhook-events/{id}', `/v1/webhook-events/${UNKNOWN_EVENT}`, ['GET']],
  ['/v1/webhook-events/{id}/replay', `/v1/webhook-events/${UNKNOWN_EVENT}/replay`, ['POST']],
  ['/v1/test_helpers/clock', '/v1/test_helpers/clock', ['GET']],
  ['/v1/test_helpers/clock/advance', '/v1/test_helpers/clock/advance', ['POST']],
  ['a preview', preview, ['GET']],
  ['captions', captions, ['GET']],
];
const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

const CASES: Case[] = [
  // Every method a known path does not take: 405 with Allow, before any key is read.
  ...KNOWN.flatMap(([name, path, methods]) => METHODS.filter((m) => !methods.includes(m)).map((m): Case => [`${m} on ${name}`, request(m, path)])),
  ['an unregistered method (PROPFIND) on a known path', request('PROPFIND', '/v1/me')],
  ['a wrong method with no key', request('DELETE', '/v1/me', { as: noKey })],
  ['a wrong method with the spent key', request('DELETE', '/v1/me', { as: (f) => f.spent })],
  ['a wrong method on an unknown path', request('DELETE', '/v1/nothing-here')],
  // HEAD on every GET path: the GET's status and headers, no body.
  ...KNOWN.filter(([, , methods]) => methods.includes('GET')).map(([name, path]): Case => [`HEAD on ${name}`, request('HEAD', path)]),
  ['HEAD with no key', request('HEAD', '/v1/me', { as: noKey })],
  ['HEAD on an unknown path', request('HEAD', '/v1/nothing-here')],
  ['HEAD on an unknown avatar', request('HEAD', `/v1/avatars/${UNKNOWN_AVATAR}`)],
  ['HEAD on a file that does not exist', file(`/files/${UNKNOWN_AVATAR}/preview.png`, {}, 'HEAD')],
  // Media types: only JSON is read.
  ['a create with no Content-Type', createAvatar(utf8(avatarBody()), {})],
  ['a create as text/plain', createAvatar(avatarBody(), { 'Content-Type': 'text/plain' })],
  ['a create as a form', createAvatar('type=prompt&name=Maya', { 'Content-Type': 'application/x-www-form-urlencoded' })],
  ['a create as multipart', createAvatar('--x\r\n\r\n--x--', { 'Content-Type': 'multipart/form-data; boundary=x' })],
  ['a create as XML', createAvatar('<avatar/>', { 'Content-Type': 'application/xml' })],
  ['a create as APPLICATION/JSON', createAvatar(avatarBody('Upper'), { 'Content-Type': 'APPLICATION/JSON' })],
  ['a create as a +json type', createAvatar(avatarBody('Vendor'), { 'Content-Type': 'application/vnd.api+json' })],
  ['a create as application/jsonx', createAvatar(avatarBody(), { 'Content-Type': 'application/jsonx' })],
  ['a create as JSON with a charset', createAvatar(avatarBody('Charset'), { 'Content-Type': 'application/json; charset=utf-8' })],
  // Bodies.
  ['a body that starts with a UTF-8 BOM', createAvatar(new Uint8Array([0xef, 0xbb, 0xbf, ...utf8(avatarBody('Bom'))]))],
  ['an advance whose body starts with a UTF-8 BOM', advance('\uFEFF{"seconds":1}')],
  ['an empty body', createAvatar('')],
  ['a body of blanks', createAvatar('  \n ')],
  ['a body of null', createAvatar('null')],
  ['a body that is an array', createAvatar('[]')],
  ['a body that is a string', createAvatar('"avatar"')],
  ['a body that is a number', createAvatar('42')],
  ['a truncated body', createAvatar('{"type":"prompt",')],
  ['a body with a comment', createAvatar('{"type":"prompt" /* x */}')],
  ['a body with text after it', createAvatar(`${avatarBody()} x`)],
  ['a body in invalid UTF-8', createAvatar(new Uint8Array([...utf8('{"type":"prompt","name":"'), 0xc3, 0x28, ...utf8('","prompt":"x"}')]))],
  ['a body over 64 KB', createAvatar(JSON.stringify({ type: 'prompt', name: 'Big', prompt: 'x'.repeat(70_000) }))],
  ['a body nested 10,000 deep', createAvatar(nested(10_000))],
  ['a body with an unknown member', createAvatar(JSON.stringify({ type: 'prompt', name: 'Maya', prompt: 'x', colour: 'red' }))],
  ['a body of an unknown type', createAvatar(JSON.stringify({ type: 'sketch', name: 'Maya' }))],
  ['a body with no type', createAvatar(JSON.stringify({ name: 'Maya', prompt: 'x' }))],
  ['a body with a member of the wrong type', createAvatar(JSON.stringify({ type: 'prompt', name: 5, prompt: 'x' }))],
  ['a body with a control character', createAvatar(JSON.stringify({ type: 'prompt', name: 'Ma\u0000ya', prompt: 'x' }))],
  ['a body with a member twice', createAvatar('{"type":"prompt","name":"Twice","name":5,"prompt":"x"}')],
  ['a video of an unknown avatar', createVideo(videoBody(UNKNOWN_AVATAR))],
  ['a video of a malformed avatar ID', createVideo(videoBody('not-an-id'))],
  ['a video of a video', createVideo((f) => videoBody(f.video))],
  ['a video with an empty script', createVideo((f) => videoBody(f.avatar, ''))],
  ['a video with a script far too long', createVideo((f) => videoBody(f.avatar, 'word '.repeat(12_000)))],
  ['an advance with an empty object', advance('{}')],
  ['an advance backwards', advance('{"seconds":-1}')],
  ['an advance too far', advance('{"seconds":1e12}')],
  ['an advance to a time that is no time', advance('{"to":"yesterday"}')],
  ['an advance of one second', advance('{"seconds":1}')],
  ['a replay of an unknown event, with a body', request('POST', `/v1/webhook-events/${UNKNOWN_EVENT}/replay`, { body: '{"x":1}', headers: json })],
  // IDs.
  ['a well-formed avatar ID of no avatar', get(`/v1/avatars/${UNKNOWN_AVATAR}`)],
  ['a malformed avatar ID', get('/v1/avatars/not-an-id')],
  ['an avatar ID in capitals', get((f) => `/v1/avatars/${f.avatar.toUpperCase()}`)],
  ['a video ID on the avatars path', get((f) => `/v1/avatars/${f.video}`)],
  ['an avatar ID on the videos path', get((f) => `/v1/avatar-videos/${f.avatar}`)],
  ['a well-formed video ID of no video', get(`/v1/avatar-videos/${UNKNOWN_VIDEO}`)],
  ['an ID of 300 characters', get(`/v1/avatars/av_${'a'.repeat(297)}`)],
  ['an ID of a NUL', get('/v1/avatars/%00')],
  ['an ID outside ASCII', get('/v1/avatars/%E2%82%AC')],
  ['an avatar of another account', get((f) => `/v1/avatars/${f.avatar}`, { as: (f) => f.stranger })],
  ['a video of another account', get((f) => `/v1/avatar-videos/${f.video}`, { as: (f) => f.stranger })],
  ['a malformed event ID', get('/v1/webhook-events/evt_bad')],
  ['a well-formed event ID of no event', get(`/v1/webhook-events/${UNKNOWN_EVENT}`)],
  // Queries of the lists.
  ...['0', '-1', '1', '100', '101', '1000', 'abc', '1.5', '', '%205', '1e1', '0x10'].map((v): Case => [`limit=${v}`, get(`/v1/avatars?limit=${v}`)]),
  ['limit twice', get('/v1/avatars?limit=5&limit=6')],
  ['a cursor of garbage', get('/v1/avatars?cursor=garbage')],
  ['an empty cursor', get('/v1/avatar-videos?cursor=')],
  ['a cursor of 2,000 characters', get(`/v1/avatar-videos?cursor=${'a'.repeat(2000)}`)],
  ['a parameter no list takes', get('/v1/avatars?order=asc')],
  ['a query that begins with "?"', get('/v1/avatars??limit=5')],
  ['a query on an operation that takes none', get('/v1/me?verbose=1')],
  ['an empty query', get('/v1/me?')],
  ['a query of a lone "&"', get('/v1/me?&')],
  ['a bad limit on the events', get('/v1/webhook-events?limit=0')],
  ['a bad cursor on the events', get('/v1/webhook-events?cursor=%FF')],
  // Authorization.
  ['no Authorization', get('/v1/me', { as: noKey })],
  ...(
    [
      ['"Bearer" alone', () => 'Bearer'],
      ['a key too short', () => 'Bearer abc'],
      ['Basic credentials', () => 'Basic dXNlcjpwYXNz'],
      ['"bearer" in lower case', (f) => `bearer ${f.key}`],
      ['"BEARER" in capitals', (f) => `BEARER ${f.key}`],
      ['two spaces after Bearer', (f) => `Bearer  ${f.key}`],
      ['a scheme of Token', (f) => `Token ${f.key}`],
      ['a key with a character past its end', (f) => `Bearer ${f.key}x`],
      ['a key with a dot in it', () => 'Bearer sk_test_abc.def.ghi'],
      ['two keys in one Authorization', (f) => `Bearer ${f.key}, Bearer ${f.stranger}`],
    ] satisfies [string, (f: Fixture) => string][]
  ).map(([name, authorization]): Case => [name, get('/v1/me', { as: noKey, headers: (f) => ({ Authorization: authorization(f) }) })]),
  ['an unknown key on a create', createAvatar(avatarBody(), { ...json, ...bearer(UNKNOWN_KEY) })],
  ['an unknown key on a bad body', createAvatar('x', { 'Content-Type': 'text/plain', ...bearer(UNKNOWN_KEY) })],
  // Rate limits: the spent key is refused before its request is read.
  ['a read of the spent key', get('/v1/me', { as: (f) => f.spent })],
  ['a list of the spent key with a bad query', get('/v1/avatars?limit=0', { as: (f) => f.spent })],
  ['a create of the spent key with a bad body', request('POST', '/v1/avatars', { as: (f) => f.spent, headers: { 'Content-Type': 'text/plain' }, body: 'x' })],
  ['HEAD of the spent key', request('HEAD', '/v1/me', { as: (f) => f.spent })],
  // Credits: the last step, after the body and the records it names.
  ['a create the credits do not cover', request('POST', '/v1/avatars', { as: (f) => f.poor, body: avatarBody('Poor'), headers: json })],
  ['a bad body of an account without credits', request('POST', '/v1/avatars', { as: (f) => f.poor, body: '{}', headers: json })],
  ['a video of an unknown avatar, without credits', request('POST', '/v1/avatar-videos', { as: (f) => f.poor, body: videoBody(UNKNOWN_AVATAR), headers: json })],
  // Idempotency keys, in order: a key is kept from its first create on.
  ['an empty Idempotency-Key', createAvatar(avatarBody('Keyed'), { ...json, 'Idempotency-Key': '' })],
  ['an Idempotency-Key of 256 characters', createAvatar(avatarBody('Keyed'), { ...json, 'Idempotency-Key': 'k'.repeat(256) })],
  ['an Idempotency-Key with a space', createAvatar(avatarBody('Keyed'), { ...json, 'Idempotency-Key': 'order 1' })],
  ['an Idempotency-Key outside ASCII', createAvatar(avatarBody('Keyed'), { ...json, 'Idempotency-Key': 'ordre-\u00e9' })],
  ['an Idempotency-Key on a bad body', createAvatar('{', { ...json, 'Idempotency-Key': 'order-0' })],
  ['an Idempotency-Key first used', createAvatar(avatarBody('Keyed'), { ...json, 'Idempotency-Key': 'order-1' })],
  ['the same key and body again', createAvatar(avatarBody('Keyed'), { ...json, 'Idempotency-Key': 'order-1' })],
  ['the same key for another body', createAvatar(avatarBody('Other'), { ...json, 'Idempotency-Key': 'order-1' })],
  ['the same key for a video', createVideo((f) => videoBody(f.avatar), { ...json, 'Idempotency-Key': 'order-1' })],
  ['an Idempotency-Key on a read', get('/v1/me', { headers: { 'Idempotency-Key': 'order-2' } })],
  // Byte ranges of a preview and of captions.
  ...['bytes=0-9', 'bytes=-10', 'bytes=10-', 'bytes=0-0', 'bytes=0-999999', 'bytes=999999-', 'bytes=-999999', 'bytes=5-2', 'bytes=abc', 'bytes=-0', 'bytes=-', 'items=0-9', 'bytes=0-1,3-4', 'bytes = 0-9', 'Bytes=0-9', ''].map(
    (range): Case => [`Range "${range}" on a preview`, file(preview, { Range: range })],
  ),
  ['a range of a preview by HEAD', file(preview, { Range: 'bytes=0-9' }, 'HEAD')],
  ['a range If-Range the current tag', request('GET', preview, { as: noKey, headers: (f) => ({ Range: 'bytes=0-9', 'If-Range': f.previewTag }) })],
  ['a range If-Range another tag', file(preview, { Range: 'bytes=0-9', 'If-Range': '"another"' })],
  ['a range If-Range the current tag, weak', request('GET', preview, { as: noKey, headers: (f) => ({ Range: 'bytes=0-9', 'If-Range': `W/${f.previewTag}` }) })],
  ['a range If-Range a date', file(preview, { Range: 'bytes=0-9', 'If-Range': 'Sat, 28 Nov 2026 02:00:00 GMT' })],
  ['If-Range with no range', request('GET', preview, { as: noKey, headers: (f) => ({ 'If-Range': f.previewTag }) })],
  ...['bytes=0-5', 'bytes=-3', 'bytes=100000-', 'bytes=3-1'].map((range): Case => [`Range "${range}" on captions`, file(captions, { Range: range })]),
  ['a range of a video not made', file((f) => `/files/${f.video}/video.mp4`, { Range: 'bytes=0-9' })],
  ['a range of a video that does not exist', file(`/files/${UNKNOWN_VIDEO}/video.mp4`, { Range: 'bytes=0-9' })],
  ['a range on an API read', get('/v1/me', { headers: { Range: 'bytes=0-9' } })],
  // Signed links (ND-FILE-LINKS): the links a read gives, expired, altered.
  ['a signed link', file((f) => f.link)],
  ['a range of a signed link', file((f) => f.link, { Range: 'bytes=0-9' })],
  ['a signed link by HEAD', file((f) => f.link, {}, 'HEAD')],
  ['a signed link past its expiry', file((f) => f.expiredLink)],
  ['a signed link with its signature altered', file((f) => f.link.replace(/signature=./u, (m) => (m.endsWith('A') ? 'signature=B' : 'signature=A')))],
  ['a signed link with a later expiry', file((f) => f.link.replace(/expires=(\d+)/u, (_, n: string) => `expires=${Number(n) + 86_400}`))],
  ['a signed link without its signature', file((f) => f.link.replace(/&signature=.*$/u, ''))],
  ['a signed link without its expiry', file((f) => f.link.replace(/expires=\d+&/u, ''))],
  ['a signed link with an expiry that is no number', file((f) => f.link.replace(/expires=\d+/u, 'expires=soon'))],
  ['a signed link moved to the captions', file((f) => f.link.replace(`/files/${f.avatar}/preview.png`, `/files/${f.video}/captions.vtt`))],
  ['a signed link moved to a job that does not exist', file((f) => f.link.replace(f.avatar, UNKNOWN_AVATAR))],
  ['a signed link with the key of its account', request('GET', (f) => f.link, {})],
  // Files.
  ['a preview with a key', get(preview)],
  ['a preview with a query', file((f) => `${preview(f)}?size=large`)],
  ['captions of an avatar', file((f) => `/files/${f.avatar}/captions.vtt`)],
  ['a preview of a video', file((f) => `/files/${f.video}/preview.png`)],
  ['a file of another name', file((f) => `/files/${f.avatar}/secret.txt`)],
  ['a file name in capitals', file((f) => `/files/${f.avatar}/PREVIEW.PNG`)],
  ['a job with no file name', file((f) => `/files/${f.avatar}`)],
  ['a file below a file', file((f) => `${preview(f)}/more`)],
  ['/files alone', file('/files')],
  ['/files/', file('/files/')],
  ['a POST of a file that does not exist', file(`/files/${UNKNOWN_AVATAR}/preview.png`, {}, 'POST')],
  ['a file of a malformed ID', file('/files/not-an-id/preview.png')],
  // Unknown paths, trailing slashes, odd spellings.
  ['/v1', get('/v1')],
  ['/v1/', get('/v1/')],
  ['an unknown path under /v1', get('/v1/nothing-here')],
  ['an unknown path under /v1 with no key', get('/v1/nothing-here', { as: noKey })],
  ['a path below an avatar', get((f) => `/v1/avatars/${f.avatar}/extra`)],
  ['a trailing slash on /v1/me', get('/v1/me/')],
  ['a trailing slash on a list', get('/v1/avatars/')],
  ['a trailing slash on an avatar', get((f) => `/v1/avatars/${f.avatar}/`)],
  ['a trailing slash on a create', request('POST', '/v1/avatars/', { body: avatarBody('Slash'), headers: json })],
  ['a trailing slash on a wrong method', request('DELETE', '/v1/avatars/')],
  ['a trailing slash on a preview', file((f) => `${preview(f)}/`)],
  ['two trailing slashes', get('/v1/me//')],
  ['a doubled slash inside', get('/v1//me')],
  ['/V1/ME', get('/V1/ME')],
  ['/v1/Avatars', get('/v1/Avatars')],
  ['a percent-encoded letter of the path', get('/v1/%6De')],
  ['a percent-encoded slash', get((f) => `/v1/avatars%2F${f.avatar}`)],
  ['a percent-encoded letter of an ID', get((f) => `/v1/avatars/%61${f.avatar.slice(1)}`)],
  ['a malformed percent escape', get('/v1/avatars/%ZZ')],
  ['a malformed percent escape on a wrong method', request('PUT', '/v1/avatars/%ZZ')],
  ['a percent-encoded dot in a file name', file((f) => `/files/${f.avatar}/preview%2Epng`)],
  ['a path parameter after a semicolon', get('/v1/me;v=1')],
  ['an encoded NUL after a path', get('/v1/me%00')],
];

/**
 * Requests not in the table, and why:
 * - `TRACE`, `TRACK` and `CONNECT`: fetch refuses to send them.
 * - A method Node's HTTP parser does not know (`FROB`, or `patch` in lower case, which
 *   fetch sends as written): the parser refuses the request line (400 malformed_request)
 *   before the router sees it; the mock, given the Request, answers 405 with Allow as for
 *   any other method the path does not take.
 * - Framing (several Host or Content-Length headers, a Transfer-Encoding, a body longer
 *   than its length, Expect): the server's HTTP parser judges the bytes; the handlers
 *   are given a Request that fetch already made whole.
 * - `/healthz`, `/metrics` and other paths outside `/v1` and `/files`: a server process's
 *   own, not the contract's; in a page the mock answers for the page's own origin, whose
 *   other paths are the app's.
 * - A ready video's `video.mp4`: the server's engine renders an MP4, the mock renders
 *   none. The server here makes its files with the mock's placeholders, so that a range's
 *   `Content-Range` (which states the file's size) compares, and a video's MP4 is 404 on both.
 * - The values of `Retry-After`, `RateLimit-Reset` and the `t` of `RateLimit`: seconds to a
 *   window's end, read at different instants on each side; compared by presence.
 */

const PLACEHOLDER_ENGINE: GenerationEngine = {
  async generate(job) {
    if (job.kind === 'avatar') return { status: 'ready', result: {} };
    return { status: 'ready', result: { duration_seconds: videoDurationSeconds((job.input as VideoInput).script) } };
  },
  artifact: placeholderFiles.artifact,
};

/** What a client acts on in an answer: compared between the two sides. */
interface Seen {
  status: number;
  /** The problem's code and each broken rule (field:rule), for a problem document. */
  code?: string;
  errors?: string[];
  headers: Record<string, string | boolean | null>;
  /** The size of a body that is not JSON (a file, a range of it): JSON bodies hold IDs and times. */
  bytes?: number;
}

/** Headers compared by value (normalized where their syntax allows spellings) or by presence. */
const BY_VALUE = ['accept-ranges', 'content-range', 'cache-control', 'www-authenticate', 'idempotent-replayed', 'ratelimit-limit', 'x-ratelimit-limit', 'ratelimit-policy'];
const BY_PRESENCE = ['etag', 'retry-after', 'location', 'x-request-id', 'ratelimit-remaining', 'ratelimit-reset', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'ratelimit'];

async function seen(response: Response): Promise<Seen> {
  const body = new Uint8Array(await response.arrayBuffer());
  const type = response.headers.get('content-type');
  const headers: Seen['headers'] = {
    // The media type and its parameters, however spaced or cased.
    'content-type': type === null ? null : type.toLowerCase().replace(/\s+/g, ''),
    allow: response.headers.get('allow'),
  };
  for (const name of BY_VALUE) headers[name] = response.headers.get(name);
  // A signed link's file is cached until the link expires: seconds that differ by when each side made its link.
  const cacheControl = response.headers.get('cache-control');
  headers['cache-control'] = cacheControl?.replace(/max-age=(\d+)/u, (m: string, n: string) => (Number(n) < 31_536_000 ? 'max-age=(the link\'s remaining lifetime)' : m)) ?? null;
  for (const name of BY_PRESENCE) headers[name] = response.headers.has(name);
  const out: Seen = { status: response.status, headers };
  if (type?.includes('json') && body.length > 0) {
    const parsed = JSON.parse(new TextDecoder().decode(body)) as { code?: string; errors?: { field: string; rule: string }[] };
    if (response.status >= 400) {
      out.code = parsed.code;
      if (parsed.errors) out.errors = parsed.errors.map((e) => `${e.field}:${e.rule}`).sort();
    }
  } else {
    out.bytes = body.length;
  }
  return out;
}

/** Each thing the two answers differ in, as "what: server's / mock's". */
function differencesOf(server: Seen | object, mock: Seen | object): string[] {
  const flat = (seen: object) => {
    const out: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(seen)) {
      if (key === 'headers') for (const [name, v] of Object.entries(value as object)) out[name] = v;
      else out[key] = value;
    }
    return out;
  };
  const a = flat(server);
  const b = flat(mock);
  return [...new Set([...Object.keys(a), ...Object.keys(b)])]
    .filter((key) => JSON.stringify(a[key]) !== JSON.stringify(b[key]))
    .map((key) => `${key}: ${JSON.stringify(a[key])} / ${JSON.stringify(b[key])}`);
}

/** The fetch of the process before MSW patches it: the server's requests never pass the handlers. */
const realFetch = globalThis.fetch;
const requestTo = (base: string, sent: Sent, via: typeof fetch) =>
  via(new URL(sent.path, base), { method: sent.method, headers: sent.headers, body: sent.body as RequestInit['body'] });

const msw = setupServer();
/** Every request the handlers let through to the network: none may be the sandbox's. */
const passedThrough: string[] = [];
let service: TestService;
let sandbox: MockedService;
let onServer: Fixture;
let onMock: Fixture;

const SPENT_PLAN = { read: { minute: 0, day: 0 }, generation: { minute: 0, day: 0 } };

async function serverFixture(): Promise<Fixture> {
  const [key, stranger, spent, poor, clock] = await Promise.all([
    service.account({ plan: GENEROUS_PLAN, credits: 100_000 }),
    service.account({ plan: GENEROUS_PLAN }),
    service.account({ plan: SPENT_PLAN }),
    service.account({ plan: GENEROUS_PLAN, credits: 0 }),
    service.account(),
  ]);
  const made = await service.request('POST', '/v1/avatars', { key: key.api_key, json: JSON.parse(avatarBody('Fixture')) });
  const avatar = await service.waitTerminal(`/v1/avatars/${made.body.id}`, key.api_key);
  const started = await service.request('POST', '/v1/avatar-videos', { key: key.api_key, json: JSON.parse(videoBody(avatar.id)) });
  const video = await service.waitTerminal(`/v1/avatar-videos/${started.body.id}`, key.api_key);
  expect([avatar.status, video.status]).toEqual(['ready', 'ready']);
  const previewTag = (await realFetch(`${service.url}/files/${avatar.id}/preview.png`)).headers.get('ETag')!;
  // The stranger's own avatar, its link read, then its clock moved past the link's lifetime.
  const theirs = await service.request('POST', '/v1/avatars', { key: stranger.api_key, json: JSON.parse(avatarBody('Theirs')) });
  const expiring = await service.waitTerminal(`/v1/avatars/${theirs.body.id}`, stranger.api_key);
  await service.request('POST', '/v1/test_helpers/clock/advance', { key: stranger.api_key, json: { seconds: FILE_LINKS.lifetimeSeconds } });
  const relative = (url: string) => {
    const parsed = new URL(url);
    return parsed.pathname + parsed.search;
  };
  const link = relative((await service.request('GET', `/v1/avatars/${avatar.id}`, { key: key.api_key })).body.preview_image_url);
  return { key: key.api_key, stranger: stranger.api_key, spent: spent.api_key, poor: poor.api_key, clock: clock.api_key, avatar: avatar.id, video: video.id, previewTag, link, expiredLink: relative(expiring.preview_image_url) };
}

async function mockFixture(): Promise<Fixture> {
  const key = await sandbox.createAccount({ plan: GENEROUS_PLAN, credits: 100_000 });
  const stranger = await sandbox.createAccount({ plan: GENEROUS_PLAN });
  const spent = await sandbox.createAccount({ plan: SPENT_PLAN });
  const poor = await sandbox.createAccount({ plan: GENEROUS_PLAN, credits: 0 });
  const clock = await sandbox.createAccount();
  const create = async (path: string, body: string) => {
    const response = await requestTo(SANDBOX_URL, { method: 'POST', path, headers: { ...bearer(key.apiKey), ...json }, body }, fetch);
    return ((await response.json()) as { id: string }).id;
  };
  const avatar = await create('/v1/avatars', avatarBody('Fixture'));
  await sandbox.clock.advance(60_000);
  const video = await create('/v1/avatar-videos', videoBody(avatar));
  await sandbox.clock.advance(60_000);
  const previewTag = (await fetch(`${SANDBOX_URL}/files/${avatar}/preview.png`)).headers.get('ETag')!;
  const read = async (apiKey: string, id: string) =>
    ((await (await requestTo(SANDBOX_URL, { method: 'GET', path: `/v1/avatars/${id}`, headers: bearer(apiKey) }, fetch)).json()) as { preview_image_url: string }).preview_image_url.slice(SANDBOX_URL.length);
  const theirs = (await (await requestTo(SANDBOX_URL, { method: 'POST', path: '/v1/avatars', headers: { ...bearer(stranger.apiKey), ...json }, body: avatarBody('Theirs') }, fetch)).json()) as { id: string };
  await sandbox.clock.advance(60_000);
  const expiredLink = await read(stranger.apiKey, theirs.id);
  await requestTo(SANDBOX_URL, { method: 'POST', path: '/v1/test_helpers/clock/advance', headers: { ...bearer(stranger.apiKey), ...json }, body: JSON.stringify({ seconds: FILE_LINKS.lifetimeSeconds }) }, fetch);
  const link = await read(key.apiKey, avatar);
  return { key: key.apiKey, stranger: stranger.apiKey, spent: spent.apiKey, poor: poor.apiKey, clock: clock.apiKey, avatar, video, previewTag, link, expiredLink };
}

beforeAll(async () => {
  service = await startTestService({ engine: PLACEHOLDER_ENGINE });
  sandbox = createSandbox({ baseUrl: SANDBOX_URL });
  msw.use(...sandbox.handlers);
  msw.listen({
    onUnhandledRequest: (request) => {
      if (new URL(request.url).origin === new URL(SANDBOX_URL).origin) passedThrough.push(`${request.method} ${request.url}`);
    },
  });
  [onServer, onMock] = await Promise.all([serverFixture(), mockFixture()]);
});
afterAll(async () => {
  msw.close();
  await service?.dispose();
});

describe('the mock and the server, sent the same hostile and odd requests', () => {
  it('answer each alike: status, problem code and rules, and the headers a client acts on', async () => {
    const differences: string[] = [];
    const statuses = new Set<number>();
    for (const [name, make] of CASES) {
      const sent = make(onServer);
      // The two sides at once: each takes the table's requests in order, and neither sees the other's.
      const [server, mock] = await Promise.all([
        requestTo(service.url, sent, realFetch).then(seen),
        requestTo(SANDBOX_URL, make(onMock), fetch).then(seen, (error: Error) => ({ passedThrough: String(error.cause ?? error) })),
      ]);
      statuses.add(server.status);
      const differing = differencesOf(server, mock);
      if (differing.length > 0) differences.push(`${name} (${sent.method} ${sent.path}): ${differing.join('; ')}`);
    }

    expect(CASES.length).toBeGreaterThanOrEqual(200);
    // The table reaches every step of the order of checks, and the files' ranges.
    expect([...statuses].sort((a, b) => a - b)).toEqual([200, 202, 206, 400, 401, 402, 403, 404, 405, 409, 413, 415, 422, 429]);
    expect(passedThrough).toEqual([]);
    expect(differences.join('\n')).toBe('');
  });
});
