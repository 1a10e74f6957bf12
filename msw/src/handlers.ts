// MSW request handlers for every operation of the contract, answered by the service's
// own use cases over the sandbox's store. Each route does what the server's route does
// (http/routes.ts): admission for the operation's bucket with its rate-limit headers,
// the query and the body checked against the contract, one use case, and every refusal
// as the contract's problem document. Bodies are typed by the generated operations.
// The paths are routed as the server's router routes them: HEAD wherever GET is, 405
// with Allow for a method a path does not take, 404 for a path that is not one, and no
// request under /v1 or /files ever leaves for the network.
import { http, HttpResponse, matchRequestUrl, type HttpHandler } from 'msw';
import type { operations } from '../../generated/openapi.ts';
import { rateLimitBuckets } from '../../contract/operations.ts';
import { RATE_LIMIT_HEADER, RATE_LIMIT_POLICY_HEADER, formatRateLimit, formatRateLimitPolicy } from '../../contract/rateLimitFields.ts';
import { admit, presentedKey, type Admission } from '../../server/src/domain/admission.ts';
import { DomainError, validationFailed } from '../../server/src/domain/errors.ts';
import { readIdempotencyKey } from '../../server/src/domain/idempotency.ts';
import { createAvatar, createAvatarVideo, getAvatar, getAvatarVideo } from '../../server/src/domain/jobs.ts';
import { listAvatars, listAvatarVideos, type Query } from '../../server/src/domain/lists.ts';
import { fileAnswer, linkedMaxAgeSeconds, readLinkedFile } from '../../server/src/domain/files.ts';
import { accountLinks, signedList } from '../../server/src/domain/fileLinks.ts';
import { getMe } from '../../server/src/domain/me.ts';
import type { LimitedBucket } from '../../server/src/domain/model.ts';
import type { StoredFile } from '../../server/src/domain/ports.ts';
import { WINDOW_MS, ceilSeconds } from '../../server/src/domain/rateLimits.ts';
import { advanceSandboxClock, readSandboxClock } from '../../server/src/domain/sandboxClock.ts';
import { getWebhookEvent, listWebhookEvents, replayWebhookEvent } from '../../server/src/domain/webhookLog.ts';
import { HttpProblem, PROBLEM_CONTENT_TYPE, PROBLEMS, problemBody } from '../../server/src/http/problem.ts';
import { MAX_BODY_BYTES, bodyTooLarge, createRequestValidator, refuseMediaType, validJsonBody } from '../../server/src/http/requestValidator.ts';
import { placeholderFiles } from './placeholders.ts';
import type { Sandbox } from './sandbox.ts';

type Operation = keyof operations;
type Responses<O extends Operation> = operations[O]['responses'];
type JsonBody<O extends Operation, S extends keyof Responses<O>> = Responses<O>[S] extends { content: { 'application/json': infer B } } ? B : never;
type RequestBody<O extends Operation> = operations[O] extends { requestBody: { content: { 'application/json': infer B } } } ? B : never;

/**
 * What a route answers: a status, its body (a JSON object, JSON text already made, or a
 * file's bytes, whose Content-Type the route sets) and its headers.
 */
interface Answer {
  status: number;
  body: unknown;
  headers: Headers;
}

const CLIENT_REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;

const newRequestId = () => {
  const bytes = crypto.getRandomValues(new Uint8Array(8));
  return `req_${[...bytes].map((b) => b.toString(16).padStart(2, '0')).join('')}`;
};

/** The request as a route reads it: who it comes from, its admission once made, its headers to send. */
class Exchange {
  readonly headers = new Headers();
  admission: Admission | null = null;

  readonly request: Request;
  readonly url: URL;

  constructor(request: Request, url: URL) {
    this.request = request;
    this.url = url;
  }

  ok<O extends Operation, S extends keyof Responses<O> & number>(_operation: O, status: S, body: JsonBody<O, S> | string): Answer {
    return { status, body, headers: this.headers };
  }
}

/** A route as the server's router has it: a method, a path with its :params, what it runs. */
interface Route {
  method: 'GET' | 'POST';
  path: string;
  run: (x: Exchange, params: Record<string, string>) => Promise<Answer>;
}

export function createHandlers(sandbox: Sandbox): HttpHandler[] {
  const validator = createRequestValidator();
  const buckets = rateLimitBuckets();
  const { deps } = sandbox;
  const base = sandbox.baseUrl;

  const bucketOf = (operation: Operation): LimitedBucket => {
    const bucket = buckets.get(operation);
    if (bucket !== 'read' && bucket !== 'generation' && bucket !== 'sandbox') throw new Error(`the contract gives ${operation} no known x-rate-limit-bucket (got ${bucket})`);
    return bucket;
  };

  /** Steps 1 and 2 of every /v1 request (the key, its bucket's room), then the query (ND-QUERY). */
  async function admitted(x: Exchange, operation: Operation): Promise<Admission> {
    const admission = await admit(deps, presentedKey(x.request.headers.get('Authorization') ?? ''), bucketOf(operation));
    if (!admission) throw noSuchRoute(x);
    x.admission = admission;
    for (const prefix of ['RateLimit', 'X-RateLimit']) {
      x.headers.set(`${prefix}-Limit`, String(admission.shown.limit));
      x.headers.set(`${prefix}-Remaining`, String(admission.shown.remaining));
      x.headers.set(`${prefix}-Reset`, String(admission.resetSeconds));
    }
    // The same figures as the IETF draft's structured fields (ND-RATELIMIT-FIELDS), as the server sends them.
    x.headers.set(
      RATE_LIMIT_POLICY_HEADER,
      formatRateLimitPolicy(admission.decision.windows.map((w) => ({ name: w.window, quota: w.limit, windowSeconds: ceilSeconds(WINDOW_MS[w.window]) }))),
    );
    x.headers.set(RATE_LIMIT_HEADER, formatRateLimit({ name: admission.shown.window, remaining: admission.shown.remaining, resetSeconds: admission.resetSeconds }));
    if (admission.refusal) {
      x.headers.set('Retry-After', String(admission.resetSeconds));
      throw admission.refusal;
    }
    // The names as the URL standard reads the query (a leading "?" belongs to the first name).
    const unknown = validator.unknownQuery(operation, new URLSearchParams(`&${x.url.search.slice(1)}`).keys());
    if (unknown.length > 0) throw validationFailed(unknown, 'The query');
    return admission;
  }

  /** Step 3 of a POST, by the server's rules: media type (415), size (413), JSON (400), the contract's schema (422). */
  async function validBody<T>(x: Exchange, schemaName: string): Promise<T> {
    refuseMediaType(x.request.headers.get('Content-Type') ?? '');
    const raw = new Uint8Array(await x.request.arrayBuffer());
    if (raw.byteLength > MAX_BODY_BYTES) throw bodyTooLarge();
    return validJsonBody<T>(validator, schemaName, raw);
  }

  /**
   * Answers one request: jobs advance first, then `run`, and any refusal leaves as a
   * problem. A HEAD gets the status and headers a GET would, with no body.
   */
  async function respond(request: Request, run: (x: Exchange) => Promise<Answer>): Promise<Response> {
    const x = new Exchange(request, new URL(request.url));
    const given = request.headers.get('X-Request-Id') ?? '';
    const requestId = CLIENT_REQUEST_ID.test(given) ? given : newRequestId();
    x.headers.set('X-Request-Id', requestId);
    let answer: Answer;
    try {
      await sandbox.tick();
      answer = await run(x);
    } catch (error) {
      answer = problem(x, error, requestId);
    }
    let body: string | Uint8Array<ArrayBuffer>;
    if (answer.body instanceof Uint8Array) {
      body = answer.body as Uint8Array<ArrayBuffer>;
    } else {
      // The server's types: Koa's JSON, and the problem type as http/errors.ts sets it.
      answer.headers.set('Content-Type', answer.status >= 400 ? PROBLEM_CONTENT_TYPE : 'application/json; charset=utf-8');
      body = typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body);
    }
    return new HttpResponse(request.method === 'HEAD' ? null : body, { status: answer.status, headers: answer.headers });
  }

  const query = (x: Exchange): Query => {
    const out: Query = {};
    for (const [name, value] of x.url.searchParams) {
      const had = out[name];
      out[name] = had === undefined ? value : Array.isArray(had) ? [...had, value] : [had, value];
    }
    return out;
  };
  const idempotencyKey = (x: Exchange) => readIdempotencyKey(x.request.headers.get('Idempotency-Key') ?? undefined);
  /** The headers of a 202: where the record is, and whether this answer is a replay (ND-IDEMPOTENCY). */
  const created = (x: Exchange, location: string, replayed: boolean) => {
    x.headers.set('Location', location);
    if (replayed) x.headers.set('Idempotent-Replayed', 'true');
  };

  /** Every route of the server's router (http/routes.ts), in its order. */
  const routes: Route[] = [
    { method: 'POST', path: '/v1/avatars', run: async (x) => {
      const { caller } = await admitted(x, 'createAvatar');
      const body = await validBody<RequestBody<'createAvatar'>>(x, 'AvatarCreateRequest');
      const made = await createAvatar(deps, caller, body, idempotencyKey(x));
      if (!made.replayed) sandbox.planJob({ id: made.record.id, kind: 'avatar' });
      created(x, `/v1/avatars/${made.record.id}`, made.replayed);
      return x.ok('createAvatar', 202, made.record);
    } },
    { method: 'GET', path: '/v1/avatars', run: async (x) => {
      const { caller } = await admitted(x, 'listAvatars');
      return x.ok('listAvatars', 200, signedList(accountLinks(deps, caller.account), await listAvatars(deps, caller.account.id, query(x))));
    } },
    { method: 'GET', path: '/v1/avatar-videos', run: async (x) => {
      const { caller } = await admitted(x, 'listAvatarVideos');
      return x.ok('listAvatarVideos', 200, signedList(accountLinks(deps, caller.account), await listAvatarVideos(deps, caller.account.id, query(x))));
    } },
    { method: 'GET', path: '/v1/avatars/:id', run: async (x, params) => {
      const { caller } = await admitted(x, 'getAvatar');
      return x.ok('getAvatar', 200, accountLinks(deps, caller.account).json(await getAvatar(deps, caller.account.id, params.id!)));
    } },
    { method: 'POST', path: '/v1/avatar-videos', run: async (x) => {
      const { caller } = await admitted(x, 'createAvatarVideo');
      const body = await validBody<RequestBody<'createAvatarVideo'>>(x, 'AvatarVideoCreateRequest');
      const made = await createAvatarVideo(deps, caller, body, idempotencyKey(x));
      if (!made.replayed) sandbox.planJob({ id: made.record.id, kind: 'avatar_video' });
      created(x, `/v1/avatar-videos/${made.record.id}`, made.replayed);
      return x.ok('createAvatarVideo', 202, made.record);
    } },
    { method: 'GET', path: '/v1/avatar-videos/:id', run: async (x, params) => {
      const { caller } = await admitted(x, 'getAvatarVideo');
      return x.ok('getAvatarVideo', 200, accountLinks(deps, caller.account).json(await getAvatarVideo(deps, caller.account.id, params.id!)));
    } },
    { method: 'GET', path: '/v1/me', run: async (x) => {
      const admission = await admitted(x, 'getMe');
      return x.ok('getMe', 200, await getMe(deps, admission));
    } },
    { method: 'GET', path: '/v1/webhook-events', run: async (x) => {
      const { caller } = await admitted(x, 'listWebhookEvents');
      return x.ok('listWebhookEvents', 200, await listWebhookEvents(deps, caller, query(x)));
    } },
    { method: 'GET', path: '/v1/webhook-events/:id', run: async (x, params) => {
      const { caller } = await admitted(x, 'getWebhookEvent');
      return x.ok('getWebhookEvent', 200, await getWebhookEvent(deps, caller, params.id!));
    } },
    // No body is read: a replay asks for nothing but the event it names.
    { method: 'POST', path: '/v1/webhook-events/:id/replay', run: async (x, params) => {
      const { caller } = await admitted(x, 'replayWebhookEvent');
      return x.ok('replayWebhookEvent', 202, await replayWebhookEvent(deps, caller, params.id!));
    } },
    { method: 'GET', path: '/v1/test_helpers/clock', run: async (x) => {
      const { caller } = await admitted(x, 'getSandboxClock');
      return x.ok('getSandboxClock', 200, readSandboxClock(deps, caller));
    } },
    { method: 'POST', path: '/v1/test_helpers/clock/advance', run: async (x) => {
      const { caller } = await admitted(x, 'advanceSandboxClock');
      const body = await validBody<RequestBody<'advanceSandboxClock'>>(x, 'SandboxClockAdvance');
      const moved = await advanceSandboxClock(deps, caller, body);
      await sandbox.tick();
      return x.ok('advanceSandboxClock', 200, moved);
    } },
    // A ready job's files need no key, as the server's: the preview and a video's captions
    // (placeholders.ts), whole or the byte range asked for, by the domain's fileAnswer,
    // through links that expire as the server's do (ND-FILE-LINKS, on the sandbox's clock).
    { method: 'GET', path: '/files/:id/:name', run: async (x, params) => {
      const linked = await readLinkedFile(deps, placeholderFiles, params.id!, params.name!, x.url.pathname, x.url.searchParams);
      if (!linked) throw noSuchRoute(x);
      const { file } = linked;
      const bytes = 'body' in file ? file.body : await readWhole(file);
      const header = (name: string) => x.request.headers.get(name) || undefined;
      const { status, headers, start, end } = fileAnswer(x.url.pathname, file, header('Range'), header('If-Range'), linkedMaxAgeSeconds(linked));
      for (const [name, value] of Object.entries(headers)) x.headers.set(name, value);
      x.headers.set('Content-Type', file.contentType);
      return { status, body: bytes.subarray(start, end + 1), headers: x.headers };
    } },
  ];

  const baseUrl = new URL(base);
  const basePath = baseUrl.pathname.replace(/\/+$/, '');
  /** The paths the server answers, case aside as its router matches them: /v1 and /files, and all below them. */
  const API_PATH = new RegExp(`^${escapeRegExp(basePath)}/(?:v1|files)(?:/|$)`, 'i');
  const isApiRequest = (request: Request) => {
    const url = new URL(request.url);
    return url.origin === baseUrl.origin && API_PATH.test(url.pathname);
  };

  /**
   * Any request under the API's paths, routed as the server's router routes it: the route
   * of its path and method (HEAD where GET is), else 405 with Allow for a path that takes
   * other methods, else 404. A path segment whose escapes do not decode is taken as it is
   * written, as the router takes it.
   */
  async function dispatch(request: Request): Promise<Response> {
    const url = new URL(request.url);
    url.pathname = url.pathname.split('/').map(literalIfUndecodable).join('/');
    const method = request.method === 'HEAD' ? 'GET' : request.method;
    const matched = routes.flatMap((route) => {
      const match = matchRequestUrl(url, `${base}${route.path}`);
      return match.matches ? [{ route, params: match.params as Record<string, string> }] : [];
    });
    const hit = matched.find(({ route }) => route.method === method);
    if (hit) return respond(request, (x) => hit.route.run(x, hit.params));
    // In the router's order: each route's methods as registered, HEAD first beside a GET.
    const allowed = [...new Set(matched.flatMap(({ route }) => (route.method === 'GET' ? ['HEAD', 'GET'] : [route.method])))];
    return respond(request, async (x) => {
      if (allowed.length === 0) throw noSuchRoute(x);
      const allow = allowed.join(', ');
      x.headers.set('Allow', allow);
      throw new HttpProblem('method_not_allowed', `${request.method} is not allowed on ${x.url.pathname}; allowed: ${allow}.`);
    });
  }

  return [
    // First, a path MSW's own matching cannot decode (it would answer 500 itself).
    http.all(({ request }) => isApiRequest(request) && !decodable(new URL(request.url).pathname), ({ request }) => dispatch(request)),
    // One handler per route, and HEAD beside each GET.
    ...routes.flatMap((route) => {
      const resolver = ({ request, params }: { request: Request; params: Record<string, string | readonly string[] | undefined> }) =>
        respond(request, (x) => route.run(x, params as Record<string, string>));
      const path = `${base}${route.path}`;
      return route.method === 'GET' ? [http.get(path, resolver), http.head(path, resolver)] : [http.post(path, resolver)];
    }),
    // Any other method or path under /v1 and /files: the server's 405 or 404, never a request that leaves the page.
    http.all(({ request }) => isApiRequest(request), ({ request }) => dispatch(request)),
  ];
}

/** Whether every escape of `path` decodes (as UTF-8). */
function decodable(path: string): boolean {
  try {
    decodeURIComponent(path);
    return true;
  } catch {
    return false;
  }
}

/** A path segment as the router reads it: decoded, or as written when its escapes do not decode. */
const literalIfUndecodable = (segment: string) => (decodable(segment) ? segment : segment.replaceAll('%', '%25'));

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** A file the store keeps, whole: the mock's files are a few kilobytes. */
async function readWhole(file: StoredFile): Promise<Uint8Array> {
  const pieces: Uint8Array[] = [];
  for await (const piece of file.read(0, file.size - 1)) pieces.push(piece);
  const out = new Uint8Array(file.size);
  let at = 0;
  for (const piece of pieces) {
    out.set(piece, at);
    at += piece.length;
  }
  return out;
}

const noSuchRoute = (x: Exchange) => new HttpProblem('not_found', `No resource at ${x.request.method} ${x.url.pathname}.`);

function problem(x: Exchange, error: unknown, requestId: string): Answer {
  const known = error instanceof DomainError || error instanceof HttpProblem;
  if (!known) console.error('avatar-service sandbox: unhandled error', error);
  const refusal = known ? error : new HttpProblem('internal_error', 'Something went wrong in the sandbox. Quote the request ID when you report it.');
  if (refusal.code === 'unauthorized') x.headers.set('WWW-Authenticate', 'Bearer realm="avatar-service"');
  const body = problemBody({ code: refusal.code, detail: refusal.message, instance: x.url.pathname, requestId, fields: refusal.fields, extra: refusal.extra });
  return { status: PROBLEMS[refusal.code]?.status ?? 500, body, headers: x.headers };
}
