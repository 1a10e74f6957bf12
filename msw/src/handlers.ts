// MSW request handlers for every operation of the contract, answered by the service's
// own use cases over the sandbox's store. Each route does what the server's route does
// (http/routes.ts): admission for the operation's bucket with its rate-limit headers,
// the query and the body checked against the contract, one use case, and every refusal
// as the contract's problem document. Bodies are typed by the generated operations.
import { http, HttpResponse, type HttpHandler } from 'msw';
import type { operations } from '../../generated/openapi.ts';
import { rateLimitBuckets } from '../../contract/operations.ts';
import { RATE_LIMIT_HEADER, RATE_LIMIT_POLICY_HEADER, formatRateLimit, formatRateLimitPolicy } from '../../contract/rateLimitFields.ts';
import { admit, type Admission } from '../../server/src/domain/admission.ts';
import { DomainError, validationFailed } from '../../server/src/domain/errors.ts';
import { readIdempotencyKey } from '../../server/src/domain/idempotency.ts';
import { createAvatar, createAvatarVideo, getAvatar, getAvatarVideo } from '../../server/src/domain/jobs.ts';
import { listAvatars, listAvatarVideos, type Query } from '../../server/src/domain/lists.ts';
import { readJobFile } from '../../server/src/domain/files.ts';
import { getMe } from '../../server/src/domain/me.ts';
import type { LimitedBucket } from '../../server/src/domain/model.ts';
import type { StoredFile } from '../../server/src/domain/ports.ts';
import { WINDOW_MS, ceilSeconds } from '../../server/src/domain/rateLimits.ts';
import { advanceSandboxClock, readSandboxClock } from '../../server/src/domain/sandboxClock.ts';
import { getWebhookEvent, listWebhookEvents, replayWebhookEvent } from '../../server/src/domain/webhookLog.ts';
import { HttpProblem, PROBLEM_CONTENT_TYPE, PROBLEMS, problemBody } from '../../server/src/http/problem.ts';
import { createRequestValidator } from '../../server/src/http/requestValidator.ts';
import { placeholderFiles } from './placeholders.ts';
import type { Sandbox } from './sandbox.ts';

type Operation = keyof operations;
type Responses<O extends Operation> = operations[O]['responses'];
type JsonBody<O extends Operation, S extends keyof Responses<O>> = Responses<O>[S] extends { content: { 'application/json': infer B } } ? B : never;
type RequestBody<O extends Operation> = operations[O] extends { requestBody: { content: { 'application/json': infer B } } } ? B : never;

/** What a route answers: a status, its JSON body (an object, or JSON text already made) and its headers. */
interface Answer {
  status: number;
  body: unknown;
  headers: Headers;
}

/** The largest body the server reads (its http/body.ts): a larger one is refused the same way. */
const MAX_BODY_BYTES = 64 * 1024;
const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;.*)?$/i;
const BEARER = /^Bearer +([A-Za-z0-9_\-]{8,200})\s*$/i;
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
    const key = BEARER.exec(x.request.headers.get('Authorization') ?? '')?.[1] ?? null;
    const admission = await admit(deps, key, bucketOf(operation));
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

  /** Step 3 of a POST: media type (415), size (413), JSON (400), the contract's schema (422). */
  async function validBody<T>(x: Exchange, schemaName: string): Promise<T> {
    const type = x.request.headers.get('Content-Type') ?? '';
    if (!JSON_TYPE.test(type)) {
      throw new HttpProblem(
        'unsupported_media_type',
        type ? `Send the body as "Content-Type: application/json"; received "${type.slice(0, 100)}".` : 'Send the body as "Content-Type: application/json".',
      );
    }
    const raw = new Uint8Array(await x.request.arrayBuffer());
    if (raw.byteLength > MAX_BODY_BYTES) throw new HttpProblem('payload_too_large', `The request body is larger than ${MAX_BODY_BYTES} bytes.`);
    let body: unknown;
    try {
      body = JSON.parse(new TextDecoder().decode(raw));
    } catch (error) {
      throw new HttpProblem('invalid_json', `The request body is not valid JSON: ${(error as Error).message}.`);
    }
    const fields = validator.validate(schemaName, body);
    if (fields.length > 0) throw validationFailed(fields);
    return body as T;
  }

  /** One route: jobs advance first, then the route runs, and any refusal leaves as a problem. */
  const route =
    (run: (x: Exchange, params: Record<string, string>) => Promise<Answer>) =>
    async ({ request, params }: { request: Request; params: Record<string, string | readonly string[] | undefined> }) => {
      const x = new Exchange(request, new URL(request.url));
      const given = request.headers.get('X-Request-Id') ?? '';
      const requestId = CLIENT_REQUEST_ID.test(given) ? given : newRequestId();
      x.headers.set('X-Request-Id', requestId);
      let answer: Answer;
      try {
        await sandbox.tick();
        answer = await run(x, params as Record<string, string>);
      } catch (error) {
        answer = problem(x, error, requestId);
      }
      const json = typeof answer.body === 'string';
      answer.headers.set('Content-Type', answer.status >= 400 ? `${PROBLEM_CONTENT_TYPE}; charset=utf-8` : 'application/json; charset=utf-8');
      return new HttpResponse(json ? (answer.body as string) : JSON.stringify(answer.body), { status: answer.status, headers: answer.headers });
    };

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

  return [
    http.post(`${base}/v1/avatars`, route(async (x) => {
      const { caller } = await admitted(x, 'createAvatar');
      const body = await validBody<RequestBody<'createAvatar'>>(x, 'AvatarCreateRequest');
      const made = await createAvatar(deps, caller, body, idempotencyKey(x));
      if (!made.replayed) sandbox.planJob({ id: made.record.id, kind: 'avatar' });
      created(x, `/v1/avatars/${made.record.id}`, made.replayed);
      return x.ok('createAvatar', 202, made.record);
    })),
    http.get(`${base}/v1/avatars`, route(async (x) => {
      const { caller } = await admitted(x, 'listAvatars');
      return x.ok('listAvatars', 200, await listAvatars(deps, caller.account.id, query(x)));
    })),
    http.get(`${base}/v1/avatars/:id`, route(async (x, params) => {
      const { caller } = await admitted(x, 'getAvatar');
      return x.ok('getAvatar', 200, await getAvatar(deps, caller.account.id, params.id!));
    })),
    http.post(`${base}/v1/avatar-videos`, route(async (x) => {
      const { caller } = await admitted(x, 'createAvatarVideo');
      const body = await validBody<RequestBody<'createAvatarVideo'>>(x, 'AvatarVideoCreateRequest');
      const made = await createAvatarVideo(deps, caller, body, idempotencyKey(x));
      if (!made.replayed) sandbox.planJob({ id: made.record.id, kind: 'avatar_video' });
      created(x, `/v1/avatar-videos/${made.record.id}`, made.replayed);
      return x.ok('createAvatarVideo', 202, made.record);
    })),
    http.get(`${base}/v1/avatar-videos`, route(async (x) => {
      const { caller } = await admitted(x, 'listAvatarVideos');
      return x.ok('listAvatarVideos', 200, await listAvatarVideos(deps, caller.account.id, query(x)));
    })),
    http.get(`${base}/v1/avatar-videos/:id`, route(async (x, params) => {
      const { caller } = await admitted(x, 'getAvatarVideo');
      return x.ok('getAvatarVideo', 200, await getAvatarVideo(deps, caller.account.id, params.id!));
    })),
    http.get(`${base}/v1/me`, route(async (x) => {
      const admission = await admitted(x, 'getMe');
      return x.ok('getMe', 200, await getMe(deps, admission));
    })),
    http.get(`${base}/v1/webhook-events`, route(async (x) => {
      const { caller } = await admitted(x, 'listWebhookEvents');
      return x.ok('listWebhookEvents', 200, await listWebhookEvents(deps, caller, query(x)));
    })),
    http.get(`${base}/v1/webhook-events/:id`, route(async (x, params) => {
      const { caller } = await admitted(x, 'getWebhookEvent');
      return x.ok('getWebhookEvent', 200, await getWebhookEvent(deps, caller, params.id!));
    })),
    http.post(`${base}/v1/webhook-events/:id/replay`, route(async (x, params) => {
      const { caller } = await admitted(x, 'replayWebhookEvent');
      return x.ok('replayWebhookEvent', 202, await replayWebhookEvent(deps, caller, params.id!));
    })),
    http.get(`${base}/v1/test_helpers/clock`, route(async (x) => {
      const { caller } = await admitted(x, 'getSandboxClock');
      return x.ok('getSandboxClock', 200, readSandboxClock(deps, caller));
    })),
    http.post(`${base}/v1/test_helpers/clock/advance`, route(async (x) => {
      const { caller } = await admitted(x, 'advanceSandboxClock');
      const body = await validBody<RequestBody<'advanceSandboxClock'>>(x, 'SandboxClockAdvance');
      const moved = await advanceSandboxClock(deps, caller, body);
      await sandbox.tick();
      return x.ok('advanceSandboxClock', 200, moved);
    })),
    // A ready job's files need no key, as the server's: the preview and a video's captions (placeholders.ts).
    http.get(`${base}/files/:id/:name`, async ({ request, params }) => {
      await sandbox.tick();
      const file = await readJobFile(deps, placeholderFiles, String(params.id), String(params.name));
      if (!file) {
        const x = new Exchange(request, new URL(request.url));
        const requestId = newRequestId();
        x.headers.set('X-Request-Id', requestId);
        x.headers.set('Content-Type', `${PROBLEM_CONTENT_TYPE}; charset=utf-8`);
        const answer = problem(x, noSuchRoute(x), requestId);
        return new HttpResponse(JSON.stringify(answer.body), { status: answer.status, headers: answer.headers });
      }
      const body = 'body' in file ? file.body : await readWhole(file);
      return new HttpResponse(body as Uint8Array<ArrayBuffer>, { status: 200, headers: { 'Content-Type': file.contentType, 'Cache-Control': 'public, max-age=31536000, immutable' } });
    }),
    // Any other path or method under /v1 is the service's 404, never a request that leaves the page.
    http.all(`${base}/v1/*`, route(async (x) => {
      throw noSuchRoute(x);
    })),
  ];
}

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

