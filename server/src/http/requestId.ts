import { randomBytes } from 'node:crypto';
import type { Middleware } from './state.ts';

const CLIENT_ID = /^[A-Za-z0-9._-]{1,128}$/;

/** X-Request-Id on every response: the client's own when it is sane, else a new one. */
export const requestId: Middleware = async (ctx, next) => {
  const given = ctx.get('X-Request-Id');
  ctx.state.requestId = CLIENT_ID.test(given) ? given : `req_${randomBytes(8).toString('hex')}`;
  ctx.set('X-Request-Id', ctx.state.requestId);
  await next();
};
