// Every error leaves as RFC 9457 problem+json with a stable `code` (ND-ERROR-BODY).
import { PROBLEM_CODES } from '../../../contract/numbers.ts';
import { MAX_FIELD_ERRORS, type FieldError } from '../domain/errors.ts';

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

/**
 * Status and title of each code, as the contract's Problem schema states them
 * (x-problem-codes); the title is the same for every occurrence of a code. Codes the
 * HTTP layer refuses before a route is known (connectionErrors.ts) are among them.
 */
export const PROBLEMS: Readonly<Record<string, { status: number; title: string }>> = PROBLEM_CODES;

/**
 * A refusal the HTTP layer makes on its own: a body it cannot read, a route or method
 * that does not exist, a store it cannot reach. The domain never raises these; its
 * refusals are DomainErrors, and both leave as the same problem document.
 */
export class HttpProblem extends Error {
  override name = 'HttpProblem';
  readonly code: string;
  readonly fields: FieldError[] = [];
  readonly extra: Record<string, unknown> = {};

  constructor(code: string, message: string) {
    super(message);
    this.code = code;
  }
}

export interface ProblemInput {
  code: string;
  detail: string;
  instance: string;
  requestId: string;
  fields?: FieldError[];
  extra?: Record<string, unknown>;
}

export function problemBody({ code, detail, instance, requestId, fields = [], extra = {} }: ProblemInput) {
  const known = PROBLEMS[code] ?? PROBLEMS.internal_error!;
  const listed = fields.slice(0, MAX_FIELD_ERRORS);
  return {
    type: `/problems/${code}`,
    title: known.title,
    status: known.status,
    code,
    detail,
    instance,
    request_id: requestId,
    ...(fields.length > 0 ? { errors: listed } : {}),
    ...(fields.length > listed.length ? { errors_total: fields.length } : {}),
    ...extra,
  };
}
