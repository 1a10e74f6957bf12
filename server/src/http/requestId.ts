import { randomUUID } from 'node:crypto';
import type { Middleware } from './state.ts';

const CLIENT_ID = /^[A-Za-z0-9._-]{1,128}$/;

/**
 * A new request ID: 16 random hex digits of a random UUID (its first and last groups,
 * which hold no version or variant bits), whose entropy Node draws in batches: a fresh
 * randomBytes call per request cost a few percent of a read.
 */
const newRequestId = () => {
  const uuid = randomUUID();
  return `req_${uuid.slice(0, 8)}${uuid.slice(28)}`;
};

/** X-Request-Id on every response: the client's own when it is sane, else a new one. */
export const requestId: Middleware = async (ctx, next) => {
  // Node's lowercased header, read directly: ctx.get would lower the name on every request.
  const given = ctx.req.headers['x-request-id'];
  ctx.state.requestId = typeof given === 'string' && CLIENT_ID.test(given) ? given : newRequestId();
  ctx.set('X-Request-Id', ctx.state.requestId);
  await next();
};
