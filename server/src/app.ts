// createApp(deps) -> Koa app, without listen(): tests drive app.callback() or listen
// on port 0; main.ts decides ports and processes.
import Koa from 'koa';
import type { Logger } from 'pino';
import type { DomainDeps } from './domain/deps.ts';
import type { GenerationEngine } from './domain/engine.ts';
import { accessLog } from './http/accessLog.ts';
import { refuseAmbiguousHeaders } from './http/connectionErrors.ts';
import { createRequestValidator, type RequestValidator } from './http/requestValidator.ts';
import { errorHandler } from './http/errors.ts';
import { HttpProblem } from './http/problem.ts';
import { requestId } from './http/requestId.ts';
import { createRouter } from './http/routes.ts';
import type { AppContext, AppState, Middleware } from './http/state.ts';
import type { Metrics } from './metrics.ts';

export interface AppDeps {
  domain: DomainDeps;
  engine: GenerationEngine;
  log: Logger;
  metrics: Metrics;
  validator?: RequestValidator;
  /** False in a worker-only process: it serves /healthz and /metrics, not the API. */
  api?: boolean;
}

function observe(metrics: Metrics): Middleware {
  return async (ctx, next) => {
    const started = performance.now();
    try {
      await next();
    } finally {
      const route = ctx.state.route ?? (ctx._matchedRoute ? String(ctx._matchedRoute) : 'unmatched');
      metrics.httpRequests.inc({ method: ctx.method, route, status: String(ctx.status) });
      metrics.httpDuration.observe({ method: ctx.method, route }, (performance.now() - started) / 1000);
    }
  };
}

/**
 * The first layer below the error handler: the headers a request must carry once
 * (refused before any route is known), then the operational endpoints. One layer, and a
 * plain function that hands an API request on without a promise of its own: every
 * layer of the chain is paid on every request, and these checks seldom answer.
 */
function front(domain: DomainDeps, metrics: Metrics): Middleware {
  return (ctx, next) => {
    refuseAmbiguousHeaders(ctx);
    const path = ctx.path;
    if (path !== '/healthz' && path !== '/metrics') return next();
    return operational(ctx, path, domain, metrics);
  };
}

async function operational(ctx: AppContext, path: '/healthz' | '/metrics', domain: DomainDeps, metrics: Metrics): Promise<void> {
  ctx.state.route = path;
  // The operational endpoints are read-only: another method is refused as on any route.
  if (ctx.method !== 'GET' && ctx.method !== 'HEAD') {
    ctx.set('Allow', 'GET, HEAD');
    throw new HttpProblem('method_not_allowed', `${ctx.method} is not allowed on ${path}; allowed: GET, HEAD.`);
  }
  if (path === '/healthz') {
    try {
      await domain.store.ping();
      ctx.body = { status: 'ok' };
    } catch {
      ctx.status = 503;
      ctx.body = { status: 'unavailable' };
    }
    return;
  }
  ctx.type = metrics.registry.contentType;
  ctx.body = await metrics.registry.metrics();
}

export function createApp({ domain, engine, log, metrics, validator = createRequestValidator(), api = true }: AppDeps): Koa<AppState> {
  const app = new Koa<AppState>();
  app.proxy = false;
  // Errors are answered by errorHandler; Koa's own printer would only repeat them.
  app.silent = true;
  const router = createRouter({ domain, validator, engine });

  app.use(requestId);
  const logging = accessLog(log);
  if (logging) app.use(logging);
  app.use(observe(metrics));
  app.use(errorHandler(log));
  app.use(front(domain, metrics));
  if (api) {
    app.use(router.routes());
    app.use(router.allowedMethods());
  }
  return app;
}
