// What every answer to a generated request must be. The requests go out on the key of
// an account without credits, so each has an answer known in advance: nothing is ever
// created and nothing fails on the server's side; under the contract, whose order of
// checks puts the request before credits, a valid create is refused for credits alone
// (402), an invalid one is 422 naming the member, another media type 415, broken JSON
// 400, an ID the account was never given 404; every answer is one the document lists,
// and its rate-limit headers describe a window that can exist.
import type { ClauseId, DecisionId } from '../clauses.ts';
import type { CheckContext } from '../context.ts';
import { describe, problemCode, problemFields } from '../expect.ts';
import type { Exchange } from '../http.ts';
import { advertised, windowFor } from '../observe/rate-limit-headers.ts';
import type { FailureDetail } from '../outcome.ts';
import { isJson } from '../world.ts';
import type { GeneratedRequest } from './requests.ts';

export type Judgement = Omit<FailureDetail, 'exchanges'>;

/** The broken member's clause, for a 422 that should have named it. */
const MEMBER_CLAUSES: Record<string, ClauseId> = {
  type: 'AV-TYPES',
  name: 'AV-NAME',
  prompt: 'AV-PROMPT',
  file: 'AV-PHOTO',
  ethnicity: 'AV-PROPS',
  sex: 'AV-PROPS',
  age: 'AV-AGE',
};

const TYPE_CLAUSES: Record<string, ClauseId> = { prompt: 'AV-PROMPT', photo: 'AV-PHOTO', props: 'AV-PROPS' };

/**
 * The clause of the kind of request: an avatar's by its type. The source has no rule of
 * its own for the video request's members (the contract's is ND-VIDEO-REQUEST); outside
 * the contract a video create is judged by the clause of the key it went out on, which
 * has no credits: refused, never taken.
 */
function kindClause(request: GeneratedRequest, contract: boolean): ClauseId | DecisionId {
  if (request.operation === 'get-avatar') return 'AV-GET';
  if (request.operation === 'get-video') return 'VID-GET';
  if (request.operation === 'create-video') return contract ? 'ND-VIDEO-REQUEST' : 'CR-402';
  return TYPE_CLAUSES[String(bodyOf(request)?.type)] ?? 'AV-TYPES';
}

/** The clause a refusal is about: the broken member's where it has one, else the kind's. */
function memberClause(request: GeneratedRequest, contract: boolean): ClauseId | DecisionId {
  if (request.operation === 'create-avatar' && request.member) return MEMBER_CLAUSES[request.member.split('.')[0] ?? ''] ?? kindClause(request, contract);
  return kindClause(request, contract);
}

function bodyOf(request: GeneratedRequest): Record<string, unknown> | undefined {
  try {
    const parsed: unknown = JSON.parse(request.body ?? '');
    return isJson(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

export function judge(ctx: CheckContext, request: GeneratedRequest, exchange: Exchange): Judgement | undefined {
  if (exchange.status >= 500) {
    return { clause: kindClause(request, ctx.contract), message: `a generated request got ${exchange.status}: the server failed on input a client can send`, expected: 'a 4xx answer', received: describe(exchange), fix: 'Refuse the input with a 4xx problem instead of failing on it.' };
  }
  if (exchange.status >= 200 && exchange.status < 300 && request.method === 'POST') {
    return { clause: 'CR-402-NO-JOB', message: 'a create on an account without credits was accepted', expected: '402, or a validation refusal', received: describe(exchange), fix: 'Reserve credits before accepting a job, and refuse when the account cannot pay.' };
  }
  if (exchange.status >= 200 && exchange.status < 300) {
    return { clause: 'AUTH-ACCOUNT', message: `a record nobody gave this account was shown (${request.path})`, expected: '404', received: describe(exchange), fix: "Answer 404 for IDs that are unknown, malformed or another account's." };
  }
  return ctx.contract ? contractAnswer(ctx, request, exchange) ?? documented(ctx, exchange) ?? coherentWindow(ctx, exchange) : sourceAnswer(ctx, request, exchange) ?? coherentWindow(ctx, exchange);
}

/** Without the contract: an invalid create is refused as invalid, or for credits when the implementation checks those first. */
function sourceAnswer(ctx: CheckContext, request: GeneratedRequest, exchange: Exchange): Judgement | undefined {
  if (request.method !== 'POST' || request.expect === 'valid' || exchange.status === 402 || exchange.status === 429) return undefined;
  if (exchange.status >= 400 && exchange.status < 500) return undefined;
  // The source's clause the request breaks, not the contract's order of answers (ND-ERRORS), which binds only the contract.
  return { clause: memberClause(request, false), message: `a request the source's rules refuse was answered ${exchange.status}`, expected: 'a 4xx refusal', received: describe(exchange), fix: 'Refuse invalid requests with a 4xx status.' };
}

function contractAnswer(ctx: CheckContext, request: GeneratedRequest, exchange: Exchange): Judgement | undefined {
  const code = problemCode(exchange);
  const want = (status: number, wanted: string, clause: ClauseId | DecisionId, why: string): Judgement | undefined =>
    exchange.status === status && code === wanted
      ? undefined
      : { clause, message: `${why}: expected ${status} ${wanted}, got ${describe(exchange)}`, expected: `${status} ${wanted}`, received: describe(exchange), fix: 'Check requests in the documented order: authentication, rate limit, media type, size, JSON, schema, resources, credits.' };
  switch (request.expect) {
    case 'media-type':
      return want(415, 'unsupported_media_type', 'ND-ERRORS', `a JSON body sent as ${request.contentType}`);
    case 'malformed':
      return want(400, 'invalid_json', 'ND-ERRORS', 'a body that is not JSON');
    case 'unknown-id':
      return want(404, 'not_found', 'AUTH-ACCOUNT', 'an ID this account was never given');
    case 'unknown-query':
      return want(422, 'validation_failed', 'ND-ERRORS', 'a read with query parameters the operation does not take') ?? namesParameter(request, exchange);
    case 'valid':
      if (request.operation === 'create-video') return want(404, 'not_found', 'ND-ERRORS', 'a valid video request for an avatar this account does not have') ?? names(request, exchange, 'avatar_id', 'ND-ERRORS');
      return want(402, 'insufficient_credits', 'CR-402', 'a valid avatar request on an account without credits');
    case 'invalid': {
      const clause = memberClause(request, true);
      const what = `a body that breaks ${request.member ? `"${request.member}" (${request.rule})` : 'the schema'}`;
      return want(422, 'validation_failed', clause, what) ?? (request.member ? names(request, exchange, request.member, clause, request.rule === 'additionalProperties') : undefined);
    }
  }
}

/**
 * errors[].field names the member, or the member it sits in, or one inside it. A member
 * the schema does not know may also be named by the object it was found in ("" for the
 * body as a whole): the contract leaves that spelling open.
 */
function names(request: GeneratedRequest, exchange: Exchange, member: string, clause: ClauseId | DecisionId, unknownMember = false): Judgement | undefined {
  const fields = problemFields(exchange);
  const parent = member.includes('.') ? member.slice(0, member.lastIndexOf('.')) : '';
  const related = (field: string) => field === member || field.startsWith(`${member}.`) || member.startsWith(`${field}.`) || (unknownMember && field === parent);
  if (fields.some(related)) return undefined;
  return {
    clause,
    message: `the ${exchange.status} for ${request.method} ${request.path} does not name "${member}" in errors[].field`,
    expected: `errors[] with an entry whose field is "${member}"`,
    received: fields.length ? `fields ${fields.map((f) => JSON.stringify(f)).join(', ')}` : 'no errors[] entries',
    fix: 'List each broken rule in errors[] as {field, rule, message}, the field as the dotted path of the member.',
  };
}

/** errors[].field names one of the request's unknown parameters; a long name may be cut, ending in "…". */
function namesParameter(request: GeneratedRequest, exchange: Exchange): Judgement | undefined {
  const fields = problemFields(exchange);
  const parameters = request.parameters ?? [];
  if (fields.some((field) => parameters.some((name) => name === field || (field.endsWith('…') && name.startsWith(field.slice(0, -1)))))) return undefined;
  return {
    clause: 'ND-ERRORS',
    message: `the 422 for GET ${request.path} names none of its query parameters in errors[].field`,
    expected: `errors[] with an entry whose field is one of ${parameters.map((p) => JSON.stringify(p)).join(', ')}`,
    received: fields.length ? `fields ${fields.map((f) => JSON.stringify(f)).join(', ')}` : 'no errors[] entries',
    fix: 'Refuse a query parameter the operation does not take with 422, naming it in errors[].field.',
  };
}

function documented(ctx: CheckContext, exchange: Exchange): Judgement | undefined {
  const violations = ctx.validator.validateResponse(exchange.method, exchange.path, exchange.status, exchange.responseHeaders, exchange.bodyText, exchange.json);
  if (violations.length === 0) return undefined;
  return { clause: 'ND-ERROR-BODY', message: `the answer is not one the contract documents: ${violations[0]?.message}`, expected: 'an answer the document lists for the operation', received: violations.map((v) => v.message).join('; '), fix: 'Answer as openapi/ documents: status, media type, body and headers.' };
}

/** Whatever the window, its headers must be able to describe it. */
function coherentWindow(ctx: CheckContext, exchange: Exchange): Judgement | undefined {
  const window = advertised(exchange);
  if (!window || exchange.bucket === undefined) return undefined;
  const longest = windowFor(ctx.options, exchange.bucket, window.limit);
  if (window.remaining <= window.limit && window.reset <= longest) return undefined;
  return {
    clause: 'RL-HEADERS',
    message: `RateLimit headers describe no possible window: limit ${window.limit}, remaining ${window.remaining}, reset ${window.reset} s`,
    expected: `remaining at most the limit, reset at most ${longest} s`,
    received: `RateLimit-Limit ${window.limit}, RateLimit-Remaining ${window.remaining}, RateLimit-Reset ${window.reset}`,
    fix: 'Send the limit, the requests left and the seconds until reset of one window.',
  };
}
