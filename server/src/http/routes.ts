// Thin routes: each is admitted for its operation's bucket (read from the contract),
// reads the request, calls one use case, and sends what it returns. A record's read runs
// alongside the admission's count (admitReading), the other use cases after it.
// Bodies are typed by the contract's generated operations, so a contract change that
// the server no longer satisfies fails type checking.
import Router from '@koa/router';
import type { operations } from '../../../generated/openapi.ts';
import { rateLimitBuckets } from '../../../contract/operations.ts';
import { getMe } from '../domain/me.ts';
import type { DomainDeps } from '../domain/deps.ts';
import { validationFailed } from '../domain/errors.ts';
import type { GenerationEngine } from '../domain/engine.ts';
import { readLinkedFile } from '../domain/files.ts';
import { accountLinks, signedList } from '../domain/fileLinks.ts';
import type { JsonText } from '../domain/serialize.ts';
import { readIdempotencyKey } from '../domain/idempotency.ts';
import { listAvatars, listAvatarVideos } from '../domain/lists.ts';
import { createAvatar, createAvatarVideo, getAvatar, getAvatarVideo } from '../domain/jobs.ts';
import type { LimitedBucket } from '../domain/model.ts';
import { advanceSandboxClock, readSandboxClock } from '../domain/sandboxClock.ts';
import { getWebhookEvent, listWebhookEvents, replayWebhookEvent } from '../domain/webhookLog.ts';
import { admitReading, admitted } from './admit.ts';
import { readValidBody } from './body.ts';
import { sendFile } from './files.ts';
import type { RequestValidator } from './requestValidator.ts';
import type { AppContext, AppState, Middleware } from './state.ts';

type Operation = keyof operations;
type Responses<O extends Operation> = operations[O]['responses'];
type JsonBody<O extends Operation, S extends keyof Responses<O>> = Responses<O>[S] extends { content: { 'application/json': infer B } } ? B : never;
type RequestBody<O extends Operation> = operations[O] extends { requestBody: { content: { 'application/json': infer B } } } ? B : never;

function send<O extends Operation, S extends keyof Responses<O> & number>(ctx: AppContext, _operation: O, status: S, body: JsonBody<O, S>): void {
  ctx.status = status;
  ctx.body = body;
}

/** Sends a record already serialized, as `send` would send the record itself. */
function sendJson<O extends Operation, S extends keyof Responses<O> & number>(ctx: AppContext, _operation: O, status: S, json: JsonText<JsonBody<O, S>>): void {
  ctx.status = status;
  ctx.set('Content-Type', 'application/json; charset=utf-8');
  ctx.body = json;
}

/** The headers of a 202: where the record is, and whether this answer is a replay (ND-IDEMPOTENCY). */
function answerCreated(ctx: AppContext, location: string, replayed: boolean): void {
  ctx.set('Location', location);
  if (replayed) ctx.set('Idempotent-Replayed', 'true');
}

export interface RouteDeps {
  domain: DomainDeps;
  validator: RequestValidator;
  engine: GenerationEngine;
}

const LIMITED_BUCKETS: readonly string[] = ['read', 'generation', 'sandbox'] satisfies LimitedBucket[];

/** The bucket the contract gives each operation; a route without one is a contract change the server missed. */
function bucketsFromContract(): (operation: Operation) => LimitedBucket {
  const buckets = rateLimitBuckets();
  return (operation) => {
    const bucket = buckets.get(operation);
    if (!bucket || !LIMITED_BUCKETS.includes(bucket)) throw new Error(`the contract gives ${operation} no known x-rate-limit-bucket (got ${bucket})`);
    return bucket as LimitedBucket;
  };
}

export function createRouter({ domain, validator, engine }: RouteDeps): Router<AppState> {
  const router = new Router<AppState>();
  const bucketOf = bucketsFromContract();
  /** Step 3's first rule (ND-QUERY): a query parameter the operation does not take is refused, naming it. */
  const queryRefusal = (operation: Operation, ctx: AppContext) => {
    // The names as the URL standard reads the query, as clients, the mock and the runner
    // do: Koa's ctx.query drops a "?" that begins the query ("??limit=5" would read as
    // limit), where the standard's name is "?limit". The "&" in front keeps that "?".
    // Most requests carry no query: nothing to read, and nothing to refuse.
    const query = ctx.querystring;
    if (query === '') return undefined;
    const unknown = validator.unknownQuery(operation, new URLSearchParams(`&${query}`).keys());
    return unknown.length > 0 ? validationFailed(unknown, 'The query') : undefined;
  };
  /** Steps 1 and 2 (admission), then the query: every route of an operation starts here. */
  const admit = (operation: Operation): Middleware => {
    const admission = admitted(domain, bucketOf(operation));
    return (ctx, next) =>
      admission(ctx, async () => {
        const refusal = queryRefusal(operation, ctx);
        if (refusal) throw refusal;
        await next();
      });
  };
  /**
   * A record's read, run alongside the admission's count (admitReading), refused for its
   * query once admitted: the refusal takes the read's place, so it comes after a 401 or a
   * 429 and before the record's 404, in the order of checks.
   */
  const readRecord = <T>(operation: Operation, ctx: AppContext, read: (accountId: string) => Promise<T>): Promise<T> => {
    const refusal = queryRefusal(operation, ctx);
    return admitReading(ctx, domain, bucketOf(operation), refusal ? () => Promise.reject(refusal) : read);
  };

  router.post('/v1/avatars', admit('createAvatar'), async (ctx) => {
    const body = await readValidBody<RequestBody<'createAvatar'>>(ctx, validator, 'AvatarCreateRequest');
    const created = await createAvatar(domain, ctx.state.caller!, body, readIdempotencyKey(ctx.headers['idempotency-key']));
    answerCreated(ctx, `/v1/avatars/${created.record.id}`, created.replayed);
    send(ctx, 'createAvatar', 202, created.record);
  });

  router.get('/v1/avatars', admit('listAvatars'), async (ctx) => {
    const list = await listAvatars(domain, ctx.state.caller!.account.id, ctx.query);
    send(ctx, 'listAvatars', 200, signedList(accountLinks(domain, ctx.state.caller!.account), list));
  });

  router.get('/v1/avatar-videos', admit('listAvatarVideos'), async (ctx) => {
    const list = await listAvatarVideos(domain, ctx.state.caller!.account.id, ctx.query);
    send(ctx, 'listAvatarVideos', 200, signedList(accountLinks(domain, ctx.state.caller!.account), list));
  });

  router.get('/v1/avatars/:id', async (ctx) => {
    const avatar = await readRecord('getAvatar', ctx, (accountId) => getAvatar(domain, accountId, ctx.params.id!));
    // Signed as it leaves (ND-FILE-LINKS): each read gives links valid for their whole lifetime.
    sendJson(ctx, 'getAvatar', 200, accountLinks(domain, ctx.state.caller!.account).json(avatar));
  });

  router.post('/v1/avatar-videos', admit('createAvatarVideo'), async (ctx) => {
    const body = await readValidBody<RequestBody<'createAvatarVideo'>>(ctx, validator, 'AvatarVideoCreateRequest');
    const created = await createAvatarVideo(domain, ctx.state.caller!, body, readIdempotencyKey(ctx.headers['idempotency-key']));
    answerCreated(ctx, `/v1/avatar-videos/${created.record.id}`, created.replayed);
    send(ctx, 'createAvatarVideo', 202, created.record);
  });

  router.get('/v1/avatar-videos/:id', async (ctx) => {
    const video = await readRecord('getAvatarVideo', ctx, (accountId) => getAvatarVideo(domain, accountId, ctx.params.id!));
    sendJson(ctx, 'getAvatarVideo', 200, accountLinks(domain, ctx.state.caller!.account).json(video));
  });

  router.get('/v1/me', admit('getMe'), async (ctx) => {
    send(ctx, 'getMe', 200, await getMe(domain, ctx.state.admission!));
  });

  router.get('/v1/webhook-events', admit('listWebhookEvents'), async (ctx) => {
    send(ctx, 'listWebhookEvents', 200, await listWebhookEvents(domain, ctx.state.caller!, ctx.query));
  });

  router.get('/v1/webhook-events/:id', admit('getWebhookEvent'), async (ctx) => {
    send(ctx, 'getWebhookEvent', 200, await getWebhookEvent(domain, ctx.state.caller!, ctx.params.id!));
  });

  // No body is read: a replay asks for nothing but the event it names.
  router.post('/v1/webhook-events/:id/replay', admit('replayWebhookEvent'), async (ctx) => {
    send(ctx, 'replayWebhookEvent', 202, await replayWebhookEvent(domain, ctx.state.caller!, ctx.params.id!));
  });

  router.get('/v1/test_helpers/clock', admit('getSandboxClock'), async (ctx) => {
    send(ctx, 'getSandboxClock', 200, readSandboxClock(domain, ctx.state.caller!));
  });

  router.post('/v1/test_helpers/clock/advance', admit('advanceSandboxClock'), async (ctx) => {
    const body = await readValidBody<RequestBody<'advanceSandboxClock'>>(ctx, validator, 'SandboxClockAdvance');
    send(ctx, 'advanceSandboxClock', 200, await advanceSandboxClock(domain, ctx.state.caller!, body));
  });

  router.get('/files/:id/:name', async (ctx) => {
    const file = await readLinkedFile(domain, engine, ctx.params.id!, ctx.params.name!, ctx.path, new URLSearchParams(ctx.querystring));
    if (!file) return; // 404 problem from the error handler
    sendFile(ctx, file);
  });

  return router;
}
