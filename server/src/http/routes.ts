// Thin routes: each reads the request, calls one use case, and sends what it returns.
// Bodies are typed by the contract's generated operations, so a contract change that
// the server no longer satisfies fails type checking.
import Router from '@koa/router';
import type { operations } from '../../../generated/openapi.ts';
import { getMe } from '../domain/account.ts';
import type { DomainDeps } from '../domain/deps.ts';
import { createAvatar, createAvatarVideo, getAvatar, getAvatarVideo } from '../domain/jobs.ts';
import { advanceSandboxClock, readSandboxClock } from '../domain/sandboxClock.ts';
import type { Bucket } from '../domain/model.ts';
import type { GenerationEngine } from '../engine/engine.ts';
import { authenticate } from './auth.ts';
import { readValidBody } from './body.ts';
import type { RequestValidator } from './contract.ts';
import { noSuchRoute } from './errors.ts';
import { rateLimit } from './rateLimit.ts';
import type { AppContext, AppState, Middleware } from './state.ts';

type Operation = keyof operations;
type Responses<O extends Operation> = operations[O]['responses'];
type JsonBody<O extends Operation, S extends keyof Responses<O>> = Responses<O>[S] extends { content: { 'application/json': infer B } } ? B : never;
type RequestBody<O extends Operation> = operations[O] extends { requestBody: { content: { 'application/json': infer B } } } ? B : never;

function send<O extends Operation, S extends keyof Responses<O> & number>(ctx: AppContext, _operation: O, status: S, body: JsonBody<O, S>): void {
  ctx.status = status;
  ctx.body = body;
}

export interface RouteDeps {
  domain: DomainDeps;
  validator: RequestValidator;
  engine: GenerationEngine;
}

export function createRouter({ domain, validator, engine }: RouteDeps): Router<AppState> {
  const router = new Router<AppState>();
  const { store, clock } = domain;
  const auth = authenticate(store);
  const api = (bucket: Bucket) => [auth, rateLimit(store, clock, bucket)] as const;
  // Live keys have no sandbox clock: they get what an unknown route gets, before the limiter counts them.
  const sandboxOnly: Middleware = async (ctx, next) => {
    if (ctx.state.caller!.key.mode !== 'sandbox') throw noSuchRoute(ctx);
    await next();
  };
  const sandboxApi = [auth, sandboxOnly, rateLimit(store, clock, 'sandbox')] as const;

  router.post('/v1/avatars', ...api('generation'), async (ctx) => {
    const body = await readValidBody<RequestBody<'createAvatar'>>(ctx, validator, 'AvatarCreateRequest');
    const avatar = await createAvatar(domain, ctx.state.caller!, body);
    ctx.set('Location', `/v1/avatars/${avatar.id}`);
    send(ctx, 'createAvatar', 202, avatar);
  });

  router.get('/v1/avatars/:id', ...api('read'), async (ctx) => {
    send(ctx, 'getAvatar', 200, await getAvatar(domain, ctx.state.caller!, ctx.params.id!));
  });

  router.post('/v1/avatar-videos', ...api('generation'), async (ctx) => {
    const body = await readValidBody<RequestBody<'createAvatarVideo'>>(ctx, validator, 'AvatarVideoCreateRequest');
    const video = await createAvatarVideo(domain, ctx.state.caller!, body);
    ctx.set('Location', `/v1/avatar-videos/${video.id}`);
    send(ctx, 'createAvatarVideo', 202, video);
  });

  router.get('/v1/avatar-videos/:id', ...api('read'), async (ctx) => {
    send(ctx, 'getAvatarVideo', 200, await getAvatarVideo(domain, ctx.state.caller!, ctx.params.id!));
  });

  router.get('/v1/me', ...api('read'), async (ctx) => {
    send(ctx, 'getMe', 200, await getMe(domain, ctx.state.caller!));
  });

  router.get('/v1/test_helpers/clock', ...sandboxApi, async (ctx) => {
    send(ctx, 'getSandboxClock', 200, readSandboxClock(domain, ctx.state.caller!));
  });

  router.post('/v1/test_helpers/clock/advance', ...sandboxApi, async (ctx) => {
    const body = await readValidBody<RequestBody<'advanceSandboxClock'>>(ctx, validator, 'SandboxClockAdvance');
    send(ctx, 'advanceSandboxClock', 200, await advanceSandboxClock(domain, ctx.state.caller!, body));
  });

  // The files behind preview_image_url and video_url. Like a CDN URL they need no key:
  // the unguessable ID in the path is the capability.
  router.get('/files/:id/:name', async (ctx) => {
    const job = await store.jobs.getJob(ctx.params.id!);
    const expected = job?.kind === 'avatar' ? 'preview.png' : 'video.mp4';
    const artifact = job && ctx.params.name === expected ? await engine.artifact(job) : null;
    if (!artifact) return; // 404 problem from the error handler
    ctx.type = artifact.contentType;
    ctx.set('Cache-Control', 'public, max-age=31536000, immutable');
    ctx.body = Buffer.from(artifact.body);
  });

  return router;
}
