// The bundled contract, loaded once: the server validates requests against the same
// schemas the document publishes, never against a hand-copied version.
import { readFileSync } from 'node:fs';
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { FieldError } from '../domain/errors.ts';

const BUNDLE = new URL('../../../generated/openapi.json', import.meta.url);

type Schemas = Record<string, object>;

// ajv-formats is CommonJS; its default export arrives wrapped under ESM.
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

export function loadSchemas(): Schemas {
  const bundle = JSON.parse(readFileSync(BUNDLE, 'utf8')) as { components: { schemas: Schemas } };
  return bundle.components.schemas;
}

/** One Ajv for all components, each registered under the id its $refs use. */
export function createContractAjv(schemas: Schemas = loadSchemas()): Ajv2020 {
  const ajv = new Ajv2020({ allErrors: true, strict: true });
  addFormats(ajv);
  ajv.addKeyword('x-clauses');
  for (const [name, schema] of Object.entries(schemas)) ajv.addSchema(schema, `#/components/schemas/${name}`);
  return ajv;
}

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
      return fn(body) ? [] : toFieldErrors(fn.errors ?? [], body);
    },
  };
}
