// Small assertions the checks share. Each failure names the clause it breaks, what was
// expected, what came back, the exchange, and what to change.
import type { ClauseId, DecisionId } from './clauses.ts';
import type { CheckContext } from './context.ts';
import type { Exchange, KeyName } from './http.ts';
import { isJson } from './world.ts';
import { fail } from './outcome.ts';

export function isSuccess(exchange: Exchange): boolean {
  return exchange.status >= 200 && exchange.status < 300;
}

export function mediaType(exchange: Exchange): string {
  return (exchange.responseHeaders['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
}

/** The members a problem's errors[] name in their `field`, in order. */
export function problemFields(exchange: Exchange): string[] {
  const errors = isJson(exchange.json) && Array.isArray(exchange.json.errors) ? exchange.json.errors : [];
  return errors.flatMap((error) => (isJson(error) && typeof error.field === 'string' ? [error.field] : []));
}

export function problemCode(exchange: Exchange): string | undefined {
  return isJson(exchange.json) && typeof exchange.json.code === 'string' ? exchange.json.code : undefined;
}

/** Where an error's code is expected, for messages: where the profile says, or anywhere. */
export function where(ctx: CheckContext, code: string): string {
  return ctx.shape.describeErrorCode(code);
}

export function describe(exchange: Exchange): string {
  const code = problemCode(exchange);
  return `${exchange.status}${code ? ` ${code}` : ''} (${mediaType(exchange) || 'no content type'})`;
}

/** The contract's problem document: media type, code and status (ND-ERROR-BODY). */
export function expectProblem(exchange: Exchange, status: number, code: string, clause: ClauseId | DecisionId, what: string): void {
  if (exchange.status !== status || problemCode(exchange) !== code || mediaType(exchange) !== 'application/problem+json') {
    fail({
      clause,
      message: `${what}: expected ${status} ${code} as application/problem+json, got ${describe(exchange)}`,
      expected: `${status} application/problem+json with "code": "${code}"`,
      received: describe(exchange),
      fix: `Answer ${status} with an RFC 9457 problem document whose code is ${code} (openapi/README.md, ND-ERROR-BODY).`,
      exchanges: [exchange],
    });
  }
}

export interface InvalidRequest {
  clause: ClauseId | DecisionId;
  /** What is wrong with it, in words ("age is 19"). */
  what: string;
  path: '/v1/avatars' | '/v1/avatar-videos';
  body: unknown;
  /** The member the contract's `errors[].field` must name. */
  field?: string;
}

/**
 * Sends a request that breaks one rule and expects it refused as invalid: with one of
 * the implementation's validation statuses under the source's clauses; exactly 422
 * validation_failed naming the field under the contract. Sent on the key with most room
 * among those whose requests cost nothing: the contract validates before it looks at
 * credits.
 */
export async function expectInvalid(ctx: CheckContext, request: InvalidRequest): Promise<Exchange> {
  const key = ctx.validationKey();
  // The implementation's own extra members, so that only the broken rule is wrong.
  const json = request.path === '/v1/avatars' && isJson(request.body) ? { ...ctx.shape.profile.create.avatar.extra, ...request.body } : request.body;
  let exchange = await ctx.http.send({ key, method: 'POST', path: request.path, json, note: request.what });
  if (exchange.status === 402 && !ctx.contract && key === 'empty') {
    // Without the contract's order of checks a 402 says nothing about validation:
    // ask again with a key whose account has credits.
    const other: KeyName = ctx.hasKey('second') ? 'second' : 'main';
    exchange = await ctx.http.send({ key: other, method: 'POST', path: request.path, json, note: `${request.what} (again, with credits)` });
  }
  const fix = `Refuse ${request.path} bodies where ${request.what}${request.field ? `, naming "${request.field}"` : ''}.`;
  const invalid = ctx.shape.validationStatuses.join(' or ');
  if (isSuccess(exchange)) {
    // The job it started still has to be accounted for by the credit checks.
    const sentWith = exchange.key === 'main' || exchange.key === 'second' || exchange.key === 'empty' ? exchange.key : 'main';
    ctx.world.trackUnexpected(`unexpected-${ctx.checkId}-${exchange.seq}`, request.path === '/v1/avatars' ? 'avatar' : 'avatar_video', sentWith, exchange);
    fail({
      clause: request.clause,
      message: `accepted a request where ${request.what}`,
      expected: ctx.contract ? '422 validation_failed' : invalid,
      received: describe(exchange),
      fix,
      exchanges: [exchange],
    });
  }
  if (exchange.status === 402) {
    fail({
      clause: request.clause,
      message: `answered 402 where ${request.what}: the body was judged valid and refused only for credits`,
      expected: '422 validation_failed (the contract checks the request before credits)',
      received: describe(exchange),
      fix,
      exchanges: [exchange],
    });
  }
  if (!ctx.contract) {
    if (!ctx.shape.validationStatuses.includes(exchange.status)) {
      fail({ clause: request.clause, message: `refused a request where ${request.what} with ${exchange.status}, which is not one of the statuses the implementation profile gives for "invalid request"`, expected: invalid, received: describe(exchange), fix, exchanges: [exchange] });
    }
    return exchange;
  }
  expectProblem(exchange, 422, 'validation_failed', request.clause, `a request where ${request.what}`);
  if (request.field !== undefined) {
    const fields = problemFields(exchange);
    if (!fields.includes(request.field)) {
      fail({
        clause: request.clause,
        message: `the 422 for a request where ${request.what} does not name "${request.field}" in errors[].field`,
        expected: `errors[] with an entry whose field is "${request.field}"`,
        received: fields.length ? `fields ${fields.map((f) => JSON.stringify(f)).join(', ')}` : 'no errors[] entries',
        fix: 'List each broken rule in errors[] as {field, rule, message} (ND-ERROR-BODY).',
        exchanges: [exchange],
      });
    }
  }
  return exchange;
}

/** A base avatar request that breaks no rule; cases derive from it. */
export function validPromptAvatar(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { type: 'prompt', name: 'Conformance validation', prompt: 'A presenter that should never be generated.', ...extra };
}

export function validPropsAvatar(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { type: 'props', name: 'Conformance validation', ethnicity: 'Asian', sex: 'male', age: 30, ...extra };
}

export function without(body: Record<string, unknown>, ...members: string[]): Record<string, unknown> {
  const copy = { ...body };
  for (const member of members) delete copy[member];
  return copy;
}
