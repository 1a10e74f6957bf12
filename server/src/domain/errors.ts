// Failures the domain reports. The HTTP layer maps each `code` to a status and a
// problem+json body; the domain itself knows nothing of HTTP.

export interface FieldError {
  field: string;
  rule: string;
  message: string;
}

export class DomainError extends Error {
  readonly code: string;
  readonly fields: FieldError[];
  readonly extra: Record<string, unknown>;

  constructor(code: string, message: string, fields: FieldError[] = [], extra: Record<string, unknown> = {}) {
    // A refusal is an answer, not a fault: no stack is captured (it cost about 6% of a
    // refused request, and a stream of refusals is what an attacker can send cheapest).
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(message);
    Error.stackTraceLimit = limit;
    this.name = 'DomainError';
    this.code = code;
    this.fields = fields;
    this.extra = extra;
  }
}

/** Longest part of a caller's ID repeated in an answer; a longer one is cut, never echoed whole. */
const ECHOED_ID_LENGTH = 64;

export const notFound = (what: string, id: string, field?: string) =>
  new DomainError(
    'not_found',
    `No ${what} ${id.length > ECHOED_ID_LENGTH ? `${id.slice(0, ECHOED_ID_LENGTH)}…` : id} exists for this account.`,
    field ? [{ field, rule: 'exists', message: `no ${what} with this ID exists for this account` }] : [],
  );

/**
 * The most field errors one answer lists. A body that breaks thousands of rules (one per
 * unknown member) would otherwise answer many times its own size; the answer then says
 * how many there were.
 */
export const MAX_FIELD_ERRORS = 20;

/**
 * A 422 whose detail names what broke the rules: the body by default, or another part of
 * the request (`the Idempotency-Key header`, `the query`), so that the detail never
 * blames the body for a header's fault.
 */
export const validationFailed = (fields: FieldError[], subject = 'The request body') =>
  new DomainError(
    'validation_failed',
    `${subject} breaks ${fields.length} rule${fields.length === 1 ? '' : 's'}; see errors${fields.length > MAX_FIELD_ERRORS ? ` (the first ${MAX_FIELD_ERRORS})` : ''}.`,
    fields,
  );
