import type { Logger } from 'pino';
import { ArtifactUnavailableError } from '../domain/engine.ts';
import { DomainError } from '../domain/errors.ts';
import { StoreUnavailableError, errorForLog } from '../domain/ports.ts';
import { HttpProblem, PROBLEM_CONTENT_TYPE, PROBLEMS, problemBody } from './problem.ts';
import type { AppContext, Middleware } from './state.ts';

export function sendProblem(ctx: AppContext, error: DomainError | HttpProblem): void {
  const status = PROBLEMS[error.code]?.status ?? 500;
  ctx.status = status;
  if (error.code === 'unauthorized') ctx.set('WWW-Authenticate', 'Bearer realm="avatar-service"');
  ctx.type = PROBLEM_CONTENT_TYPE;
  ctx.body = problemBody({
    code: error.code,
    detail: error.message,
    instance: ctx.path,
    requestId: ctx.state.requestId,
    fields: error.fields,
    extra: error.extra,
  });
}

/** What any request to a route that does not exist gets. */
export const noSuchRoute = (ctx: AppContext) => new HttpProblem('not_found', `No resource at ${ctx.method} ${ctx.path}.`);

/**
 * The status recorded (in /metrics, never sent) for a request whose client closed the
 * connection before it was read: nginx's 499, so that no client-side abort counts as 5xx.
 */
export const CLIENT_CLOSED_REQUEST = 499;

/** Seconds a client waits before retrying after a 503. */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 5;

/**
 * Turns every failure into problem+json. Domain errors and HTTP problems carry their code; anything else
 * is our fault: logged with the request ID, answered 500 without a stack or a secret.
 */
export function errorHandler(log: Logger): Middleware {
  return async (ctx, next) => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) {
        throw noSuchRoute(ctx);
      }
      // 501 is the router's answer to a method it knows nowhere (TRACE, PROPFIND): to the
      // client it is the same refusal, with the same Allow, as a method of another route.
      if ((ctx.status === 405 || ctx.status === 501) && ctx.body === undefined) {
        throw new HttpProblem('method_not_allowed', `${ctx.method} is not allowed on ${ctx.path}; allowed: ${ctx.response.get('Allow')}.`);
      }
      // The router answers OPTIONS itself with an empty 200. The contract documents no
      // OPTIONS operation and the API serves no browsers (ND-OPTIONS): it is refused as
      // any other method the path does not take, with the same Allow.
      if (ctx.method === 'OPTIONS' && ctx.status === 200 && ctx.body === '' && ctx.response.get('Allow')) {
        throw new HttpProblem('method_not_allowed', `OPTIONS is not allowed on ${ctx.path}; allowed: ${ctx.response.get('Allow')}.`);
      }
    } catch (error) {
      if (error instanceof DomainError || error instanceof HttpProblem) {
        sendProblem(ctx, error);
        return;
      }
      if (error instanceof StoreUnavailableError) {
        log.warn({ requestId: ctx.state.requestId, err: errorForLog(error) }, 'store unavailable');
        ctx.set('Retry-After', String(UNAVAILABLE_RETRY_AFTER_SECONDS));
        sendProblem(ctx, new HttpProblem('service_unavailable', 'The service cannot reach its store; retry after the delay in Retry-After.'));
        return;
      }
      // A file the engine could not make: its reason is for the log, not for the client.
      if (error instanceof ArtifactUnavailableError) {
        if (error.retryable) {
          // Expected under load and answered as such: one line, no stack to alarm anyone.
          log.warn({ requestId: ctx.state.requestId, reason: error.message }, 'file not made now (the engine is busy); answered 503');
          ctx.set('Retry-After', String(UNAVAILABLE_RETRY_AFTER_SECONDS));
          sendProblem(ctx, new HttpProblem('service_unavailable', 'The engine is making many files at once; retry after the delay in Retry-After.'));
        } else {
          log.error({ requestId: ctx.state.requestId, err: error }, 'file could not be made');
          sendProblem(ctx, new HttpProblem('internal_error', 'The engine could not make this file. Quote the request ID when you report it.'));
        }
        return;
      }
      // The client went away (mid-upload, say): nobody is left to answer, and it is not our fault.
      if (ctx.req.destroyed && (ctx.req.readableAborted || (error as NodeJS.ErrnoException).code === 'ECONNRESET' || (error as Error).message === 'aborted')) {
        log.info({ requestId: ctx.state.requestId }, 'client closed the connection before the request was read');
        ctx.status = CLIENT_CLOSED_REQUEST;
        return;
      }
      log.error({ requestId: ctx.state.requestId, err: error }, 'unhandled error');
      sendProblem(ctx, new HttpProblem('internal_error', 'Something went wrong on our side. Quote the request ID when you report it.'));
    }
  };
}
