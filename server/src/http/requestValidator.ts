// Request validation: the server checks bodies against the same schemas the document
// publishes, never against a hand-copied version, and words Ajv's findings as the
// contract's errors[].
import type { Ajv2020, ErrorObject, ValidateFunction } from 'ajv/dist/2020.js';
import { bodyTooLargeDetail, MAX_JSON_BODY_BYTES } from '../../../contract/bodyLimit.ts';
import { queryParameters } from '../../../contract/operations.ts';
import { createContractAjv } from '../../../contract/schemas.ts';
import { validationFailed, type FieldError } from '../domain/errors.ts';
import { TEXT_MESSAGE, TEXT_RULE, textErrors } from '../domain/text.ts';
import { textPattern } from '../../../contract/text.ts';
import { HttpProblem } from './problem.ts';

const dotted = (pointer: string) => pointer.split('/').filter(Boolean).join('.');
/** The contract's text rule as a pattern: a string that breaks it is reported as the rule `text`, not as a regular expression. */
const TEXT_PATTERN = textPattern();
const join = (base: string, member: string) => (base ? `${base}.${member}` : member);

/** The `type` of the body, for messages such as "is required when type is props". */
function typeOf(body: unknown): string | undefined {
  return body && typeof body === 'object' && 'type' in body ? String((body as { type: unknown }).type) : undefined;
}

/** What a schema of variants told apart by a tag (a discriminator) says of its variants. */
export interface Variants {
  /** The tag's values, one per variant. */
  values: string[];
  /** Members some variant has. */
  members: Set<string>;
  /** Members every variant requires: the others are required only by some. */
  requiredByAll: Set<string>;
}

/** Ajv's errors as the contract's `errors[]`: each names the field and the rule it broke. */
export function toFieldErrors(errors: ErrorObject[], body: unknown, variants?: Variants): FieldError[] {
  const out: FieldError[] = [];
  const seen = new Set<string>();
  // Required by the variant the tag names, not by all of them.
  const conditional = (e: ErrorObject) =>
    variants !== undefined && e.instancePath === '' && !variants.requiredByAll.has(String((e.params as { missingProperty?: string }).missingProperty));
  for (const e of errors) {
    const base = dotted(e.instancePath);
    const p = e.params as Record<string, unknown>;
    let item: FieldError | null;
    switch (e.keyword) {
      case 'oneOf':
        // No alternative matched: each one's `required` below names what is missing.
        item = Array.isArray(p.passingSchemas) ? { field: base, rule: 'one_of', message: 'must give one of its alternatives, not several' } : null;
        break;
      case 'required':
        item = {
          field: join(base, String(p.missingProperty)),
          rule: 'required',
          message: conditional(e) ? `is required when type is ${typeOf(body)}` : 'is required',
        };
        break;
      case 'additionalProperties': {
        const member = String(p.additionalProperty);
        const ofAnother = variants !== undefined && base === '' && variants.members.has(member);
        item = { field: join(base, member), rule: 'not_allowed', message: ofAnother ? `is not allowed when type is ${typeOf(body)}` : 'is not a known member' };
        break;
      }
      case 'discriminator':
        // The tag is missing, or names no variant.
        item =
          p.error === 'tag' && p.tagValue === undefined
            ? { field: join(base, String(p.tag)), rule: 'required', message: 'is required' }
            : { field: join(base, String(p.tag)), rule: 'enum', message: `must be one of: ${(variants?.values ?? []).join(', ')}` };
        break;
      case 'type':
        item = { field: base, rule: 'type', message: base ? `must be ${String(p.type)}` : 'the body must be a JSON object' };
        break;
      case 'enum':
        // `enum: [x]` beside `const: x` restates the const for tools that read only enum: one rule, reported once, as the const.
        item = errors.some((o) => o.keyword === 'const' && o.instancePath === e.instancePath && o.schemaPath === e.schemaPath.replace(/enum$/, 'const'))
          ? null
          : { field: base, rule: 'enum', message: `must be one of: ${(p.allowedValues as unknown[]).join(', ')}` };
        break;
      case 'const':
        item = { field: base, rule: 'const', message: `must be ${JSON.stringify(p.allowedValue)}` };
        break;
      case 'minimum':
      case 'maximum':
        item = { field: base, rule: e.keyword, message: `must be at ${e.keyword === 'minimum' ? 'least' : 'most'} ${String(p.limit)}` };
        break;
      case 'minLength':
      case 'maxLength':
        item = { field: base, rule: e.keyword, message: `must be at ${e.keyword === 'minLength' ? 'least' : 'most'} ${String(p.limit)} characters long` };
        break;
      case 'format':
        item = { field: base, rule: 'format', message: `must be a valid ${String(p.format)}` };
        break;
      case 'pattern':
        item =
          p.pattern === TEXT_PATTERN
            ? { field: base, rule: TEXT_RULE, message: TEXT_MESSAGE }
            : { field: base, rule: 'pattern', message: base === 'file.url' ? 'must start with http:// or https://' : `must match ${String(p.pattern)}` };
        break;
      default:
        item = { field: base, rule: e.keyword, message: e.message ?? 'is invalid' };
    }
    if (!item) continue;
    const key = `${item.field}|${item.rule}`;
    if (!seen.has(key)) {
      seen.add(key);
      out.push(item);
    }
  }
  return out;
}

export interface RequestValidator {
  /** The body's broken rules; empty when it conforms. */
  validate(schemaName: string, body: unknown): FieldError[];
  /** The query parameters the operation does not take (ND-QUERY), each as a broken rule; empty when none. */
  unknownQuery(operationId: string, names: Iterable<string>): FieldError[];
}

/** Longest parameter name repeated in an answer; a longer one is cut, never echoed whole. */
const ECHOED_NAME_LENGTH = 64;

/** Refuses what the contract does not list, as additionalProperties: false does for a body. */
function unknownQueryOf(taken: ReadonlyMap<string, readonly string[]>, operationId: string, given: Iterable<string>): FieldError[] {
  const known = taken.get(operationId);
  if (!known) throw new Error(`No operation ${operationId} in the contract`);
  const names = [...new Set(given)].filter((name) => !known.includes(name));
  if (names.length === 0) return [];
  const message = `is not a query parameter of this operation, which takes ${known.length > 0 ? `only: ${known.join(', ')}` : 'none'}`;
  return names.map((name) => ({
    field: name.length > ECHOED_NAME_LENGTH ? `${name.slice(0, ECHOED_NAME_LENGTH)}…` : name,
    rule: 'not_allowed',
    message,
  }));
}

/** The variants of a schema with a discriminator, read from the schemas Ajv holds. */
function variantsOf(ajv: Ajv2020, schema: Record<string, any>): Variants | undefined {
  const tag = schema.discriminator?.propertyName as string | undefined;
  if (!tag || !Array.isArray(schema.oneOf)) return undefined;
  const branches = (schema.oneOf as { $ref: string }[]).map((b) => ajv.getSchema(b.$ref)!.schema as Record<string, any>);
  const required = branches.map((b) => new Set<string>(b.required ?? []));
  return {
    values: branches.map((b) => String(b.properties[tag].const)),
    members: new Set(branches.flatMap((b) => Object.keys(b.properties ?? {}))),
    requiredByAll: new Set([...required[0]!].filter((m) => required.every((r) => r.has(m)))),
  };
}

export function createRequestValidator(ajv: Ajv2020 = createContractAjv(), taken: ReadonlyMap<string, readonly string[]> = queryParameters()): RequestValidator {
  const compiled = new Map<string, { fn: ValidateFunction; variants?: Variants }>();
  return {
    unknownQuery: (operationId, names) => unknownQueryOf(taken, operationId, names),
    validate(schemaName, body) {
      let entry = compiled.get(schemaName);
      if (!entry) {
        const fn = ajv.getSchema(`#/components/schemas/${schemaName}`);
        if (!fn) throw new Error(`No schema ${schemaName} in the contract`);
        entry = { fn, variants: variantsOf(ajv, fn.schema as Record<string, any>) };
        compiled.set(schemaName, entry);
      }
      const { fn, variants } = entry;
      // The schema's findings first; then the one rule no JSON Schema keyword can state.
      const broken = fn(body) ? [] : toFieldErrors(fn.errors ?? [], body, variants);
      return [...broken, ...textErrors(body).filter((t) => !broken.some((b) => b.field === t.field))];
    },
  };
}

/** Largest request body accepted (ND-ERRORS: 413 payload_too_large), stated once in contract/ where the conformance proxy reads it too. */
export const MAX_BODY_BYTES = MAX_JSON_BODY_BYTES;

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;.*)?$/i;

/** Step 3's first rule of a body, read before its bytes: it is sent as JSON (415 otherwise). */
export function refuseMediaType(type: string): void {
  if (JSON_TYPE.test(type)) return;
  throw new HttpProblem(
    'unsupported_media_type',
    type ? `Send the body as "Content-Type: application/json"; received "${type.slice(0, 100)}".` : 'Send the body as "Content-Type: application/json".',
  );
}

export const bodyTooLarge = () => new HttpProblem('payload_too_large', bodyTooLargeDetail());

/**
 * UTF-8 with a byte order mark kept as the character it is: JSON text never begins with
 * one (RFC 8259, section 8.1), so a body that does is not JSON (400), whoever reads it.
 * Bytes that are not UTF-8 are refused the same way rather than stored as U+FFFD: JSON
 * exchanged between systems is UTF-8 (same section), and a name the client never sent
 * must not come back in its records.
 */
const UTF8 = new TextDecoder('utf-8', { ignoreBOM: true, fatal: true });

/**
 * Step 3 of a body once its bytes are read (at most MAX_BODY_BYTES): JSON syntax (400),
 * then the contract's schema `schemaName` (422 with every broken rule). Returns the body
 * typed as the schema says.
 */
export function validJsonBody<T>(validator: RequestValidator, schemaName: string, raw: Uint8Array): T {
  let text: string;
  try {
    text = UTF8.decode(raw);
  } catch {
    throw new HttpProblem('invalid_json', 'The request body is not valid JSON: it is not UTF-8 text (RFC 8259, section 8.1).');
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (error) {
    throw new HttpProblem('invalid_json', `The request body is not valid JSON: ${(error as Error).message}.`);
  }
  const fields = validator.validate(schemaName, body);
  if (fields.length > 0) throw validationFailed(fields);
  return body as T;
}
