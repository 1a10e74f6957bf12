// Request validation: the server checks bodies against the same schemas the document
// publishes, never against a hand-copied version, and words Ajv's findings as the
// contract's errors[].
import type { Ajv2020, ErrorObject, ValidateFunction } from 'ajv/dist/2020.js';
import { createContractAjv } from '../../../contract/schemas.ts';
import type { FieldError } from '../domain/errors.ts';
import { textErrors } from '../domain/text.ts';

const dotted = (pointer: string) => pointer.split('/').filter(Boolean).join('.');
const join = (base: string, member: string) => (base ? `${base}.${member}` : member);

/** The `type` of the body, for messages such as "is required when type is props". */
function typeOf(body: unknown): string | undefined {
  return body && typeof body === 'object' && 'type' in body ? String((body as { type: unknown }).type) : undefined;
}

/** Ajv's errors as the contract's `errors[]`: each names the field and the rule it broke. */
export function toFieldErrors(errors: ErrorObject[], body: unknown): FieldError[] {
  const out: FieldError[] = [];
  const seen = new Set<string>();
  const conditional = (e: ErrorObject) => e.schemaPath.includes('/then/');
  for (const e of errors) {
    const base = dotted(e.instancePath);
    const p = e.params as Record<string, unknown>;
    let item: FieldError | null;
    switch (e.keyword) {
      case 'if':
      case 'allOf':
        item = null; // the failing branch below says what is wrong
        break;
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
      case 'false schema':
        item = { field: base, rule: 'not_allowed', message: `is not allowed when type is ${typeOf(body)}` };
        break;
      case 'additionalProperties':
        item = { field: join(base, String(p.additionalProperty)), rule: 'not_allowed', message: 'is not a known member' };
        break;
      case 'type':
        item = { field: base, rule: 'type', message: base ? `must be ${String(p.type)}` : 'the body must be a JSON object' };
        break;
      case 'enum':
        item = { field: base, rule: 'enum', message: `must be one of: ${(p.allowedValues as unknown[]).join(', ')}` };
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
        item = { field: base, rule: 'pattern', message: base === 'file.url' ? 'must start with http:// or https://' : `must match ${String(p.pattern)}` };
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
}

export function createRequestValidator(ajv: Ajv2020 = createContractAjv()): RequestValidator {
  const compiled = new Map<string, ValidateFunction>();
  return {
    validate(schemaName, body) {
      let fn = compiled.get(schemaName);
      if (!fn) {
        fn = ajv.getSchema(`#/components/schemas/${schemaName}`);
        if (!fn) throw new Error(`No schema ${schemaName} in the contract`);
        compiled.set(schemaName, fn);
      }
      // The schema's findings first; then the one rule no JSON Schema keyword can state.
      const broken = fn(body) ? [] : toFieldErrors(fn.errors ?? [], body);
      return [...broken, ...textErrors(body).filter((t) => !broken.some((b) => b.field === t.field))];
    },
  };
}
