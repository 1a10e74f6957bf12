// Every error leaves as RFC 9457 problem+json with a stable `code` (ND-ERROR-BODY).
import { MAX_FIELD_ERRORS, type FieldError } from '../domain/errors.ts';

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

/** Status and title of each code; the title is the same for every occurrence of a code. */
export const PROBLEMS: Record<string, { status: number; title: string }> = {
  invalid_json: { status: 400, title: 'Malformed JSON' },
  unauthorized: { status: 401, title: 'Unauthorized' },
  insufficient_credits: { status: 402, title: 'Insufficient credits' },
  not_found: { status: 404, title: 'Not found' },
  method_not_allowed: { status: 405, title: 'Method not allowed' },
  avatar_not_ready: { status: 409, title: 'Avatar not ready' },
  idempotency_key_reused: { status: 409, title: 'Idempotency key reused' },
  sandbox_clock_unavailable: { status: 409, title: 'Sandbox clock unavailable' },
  webhook_event_pending: { status: 409, title: 'Webhook event pending' },
  payload_too_large: { status: 413, title: 'Payload too large' },
  unsupported_media_type: { status: 415, title: 'Unsupported media type' },
  validation_failed: { status: 422, title: 'Validation failed' },
  rate_limit_exceeded: { status: 429, title: 'Rate limit exceeded' },
  internal_error: { status: 500, title: 'Internal error' },
  service_unavailable: { status: 503, title: 'Service unavailable' },
  // Refused by the HTTP layer before a route is known (connectionErrors.ts).
  malformed_request: { status: 400, title: 'Malformed request' },
  request_timeout: { status: 408, title: 'Request timeout' },
  expectation_failed: { status: 417, title: 'Expectation failed' },
  request_header_fields_too_large: { status: 431, title: 'Request header fields too large' },
};

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
