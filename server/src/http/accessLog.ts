// One line per answered request (method, path, status, duration, request ID) from
// pino's own HTTP logger, on the service's logger, so it is redacted like every other
// line. The path is logged without its query, and no header is; a key or signing secret
// a client put in the path is redacted (contract/secrets.ts), as the runner's reports
// redact it.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { pinoHttp } from 'pino-http';
import { redactSecretShapes } from '../../../contract/secrets.ts';
import type { Middleware } from './state.ts';

const REQUEST_ID = Symbol('requestId');
type Tagged = IncomingMessage & { [REQUEST_ID]?: string };

const pathOf = (req: IncomingMessage) => redactSecretShapes((req.url ?? '').split('?')[0]!);

/** The access log's layer, or null when the logger's level leaves its lines out. */
export function accessLog(log: Logger): Middleware | null {
  // Its lines are info (and warn for a 5xx, which the error handler logs as well): below
  // info, pino-http would build a child logger per request for lines never written, and
  // a layer that only passes the request on would still cost every request its turn.
  if (!log.isLevelEnabled('info')) return null;
  const logRequest = pinoHttp({
    logger: log,
    quietReqLogger: true,
    wrapSerializers: false,
    genReqId: (req) => (req as Tagged)[REQUEST_ID] ?? '',
    customAttributeKeys: { reqId: 'requestId', responseTime: 'durationMs' },
    serializers: {
      req: (req: IncomingMessage) => ({ method: req.method, path: pathOf(req) }),
      res: (res: ServerResponse) => ({ status: res.statusCode }),
    },
    // A 5xx is ours to look at; everything else, refusals included, is traffic.
    customLogLevel: (_req, res) => (res.statusCode >= 500 ? 'warn' : 'info'),
    customSuccessMessage: (req, res) => `${req.method} ${pathOf(req)} ${res.statusCode}`,
    customErrorMessage: (req, res) => `${req.method} ${pathOf(req)} ${res.writableFinished ? res.statusCode : 'closed by the client before the answer'}`,
  });
  return async (ctx, next) => {
    (ctx.req as Tagged)[REQUEST_ID] = ctx.state.requestId;
    logRequest(ctx.req, ctx.res);
    await next();
  };
}
