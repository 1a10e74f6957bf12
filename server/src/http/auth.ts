import type { Store } from '../storage/ports.ts';
import { DomainError } from '../domain/errors.ts';
import { hashApiKey } from '../domain/keys.ts';
import type { Middleware } from './state.ts';

/** RFC 9110 §11.1: the scheme name is case-insensitive ("bearer", "BEARER"). */
const BEARER = /^Bearer +([A-Za-z0-9_\-]{8,200})\s*$/i;

/**
 * Step 1 of every /v1 request (AUTH-KEY, ND-AUTH-PRESENTATION): the key is looked up by
 * its hash; a missing, malformed, unknown or revoked key gets the same 401, which never
 * echoes the key.
 */
export function authenticate(store: Store): Middleware {
  return async (ctx, next) => {
    const match = BEARER.exec(ctx.get('Authorization'));
    const found = match ? await store.accounts.findKeyByHash(hashApiKey(match[1]!)) : null;
    if (!found) {
      ctx.set('WWW-Authenticate', 'Bearer realm="avatar-service"');
      throw new DomainError('unauthorized', 'Send a valid API key as "Authorization: Bearer <key>".');
    }
    ctx.state.caller = { account: found.account, key: found.key };
    await next();
  };
}

/**
 * A request with more than one Authorization header is malformed: which key would be
 * meant is unknowable, and taking the first (what Node does) would act on a guess.
 * Refused before any route is known, like the other requests the HTTP layer cannot read.
 */
export const refuseRepeatedAuthorization: Middleware = async (ctx, next) => {
  let seen = 0;
  const raw = ctx.req.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) if (raw[i]!.length === 13 && raw[i]!.toLowerCase() === 'authorization') seen++;
  if (seen > 1) throw new DomainError('malformed_request', `The request carries ${seen} Authorization headers; send exactly one.`);
  await next();
};
