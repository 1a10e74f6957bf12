// Validates what the service answered against the OpenAPI document (the contract
// profile): the status is documented for the operation, the body
// matches the schema of that status and media type, and the documented headers are
// there with valid values. Ajv's strict mode refuses an OpenAPI document as a schema,
// so each components.schemas entry is registered under its own $ref and each
// response schema is compiled on its own.
import type { Ajv2020, ValidateFunction } from 'ajv/dist/2020.js';
import { BUNDLE_PATH, createContractAjv, loadBundle } from '../../contract/schemas.ts';
import type { Bucket } from './pacer.ts';

type Json = Record<string, unknown>;

export interface OperationMatch {
  operationId: string;
  method: string;
  template: string;
  bucket: Bucket | undefined;
  operation: Json;
}

export interface ContractViolation {
  kind: 'status' | 'content-type' | 'body' | 'header';
  message: string;
}

export const DEFAULT_OPENAPI_PATH = BUNDLE_PATH;

export class ContractValidator {
  readonly document: Json;
  readonly #ajv: Ajv2020;
  readonly #compiled = new Map<string, ValidateFunction>();
  readonly #operations: { method: string; template: string; pattern: RegExp; operation: Json }[] = [];

  constructor(document: Json) {
    this.document = document;
    this.#ajv = createContractAjv(document);
    for (const [template, item] of Object.entries((document.paths ?? {}) as Record<string, Json>)) {
      const pattern = new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{[^}]+\\?\}/g, '[^/]+')}$`);
      for (const method of ['get', 'post', 'put', 'patch', 'delete']) {
        const operation = item[method] as Json | undefined;
        if (operation) this.#operations.push({ method: method.toUpperCase(), template, pattern, operation });
      }
    }
  }

  static load(path: string | URL = DEFAULT_OPENAPI_PATH): ContractValidator {
    return new ContractValidator(loadBundle(path));
  }

  match(method: string, path: string): OperationMatch | undefined {
    const bare = path.split('?')[0] ?? path;
    const found = this.#operations.find((op) => op.method === method && op.pattern.test(bare));
    if (!found) return undefined;
    const bucket = found.operation['x-rate-limit-bucket'];
    return {
      operationId: String(found.operation.operationId),
      method: found.method,
      template: found.template,
      bucket: bucket === 'read' || bucket === 'generation' ? bucket : undefined,
      operation: found.operation,
    };
  }

  /** Validates a value against a named component schema; returns readable errors. */
  validateSchema(name: string, value: unknown): string[] {
    return this.#run(`#/components/schemas/${name}`, { $ref: `#/components/schemas/${name}` }, value);
  }

  /**
   * A JSON request body against its operation's schema: readable errors, none when it
   * is valid; undefined when the operation takes no JSON body.
   */
  validateRequest(method: string, path: string, value: unknown): string[] | undefined {
    const match = this.match(method, path);
    const body = match?.operation.requestBody ? this.#deref(match.operation.requestBody as Json) : undefined;
    const schema = ((body?.content ?? {}) as Record<string, Json>)['application/json']?.schema as Json | undefined;
    if (!match || !schema) return undefined;
    return this.#run(`request:${match.operationId}`, schema, value);
  }

  /** Status, media type, body and headers of one answer, against its operation. */
  validateResponse(method: string, path: string, status: number, headers: Record<string, string>, bodyText: string, json: unknown): ContractViolation[] {
    const match = this.match(method, path);
    if (!match) return [];
    const responses = (match.operation.responses ?? {}) as Record<string, Json>;
    const documented = responses[String(status)] ?? responses[`${String(status)[0]}XX`] ?? responses.default;
    if (!documented) {
      return [{ kind: 'status', message: `${status} is not documented for ${match.method} ${match.template} (documented: ${Object.keys(responses).join(', ')})` }];
    }
    const response = this.#deref(documented);
    const violations: ContractViolation[] = [];

    const content = (response.content ?? {}) as Record<string, Json>;
    const mediaType = (headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
    if (Object.keys(content).length > 0) {
      const media = content[mediaType];
      if (!media) {
        violations.push({ kind: 'content-type', message: `${status} answered Content-Type "${mediaType || '(none)'}"; documented: ${Object.keys(content).join(', ')}` });
      } else if (media.schema) {
        if (json === undefined) {
          violations.push({ kind: 'body', message: `${status} body is not JSON: ${bodyText.slice(0, 120)}` });
        } else {
          const key = `${match.operationId}:${status}:${mediaType}`;
          for (const error of this.#run(key, media.schema as Json, json)) violations.push({ kind: 'body', message: `${status} body ${error}` });
        }
      }
    }

    for (const [name, raw] of Object.entries((response.headers ?? {}) as Record<string, Json>)) {
      const header = this.#deref(raw);
      const value = headers[name.toLowerCase()];
      if (value === undefined) {
        if (header.required === true) violations.push({ kind: 'header', message: `${status} lacks the required header ${name}` });
        continue;
      }
      const schema = header.schema as Json | undefined;
      if (!schema) continue;
      const typed = schema.type === 'integer' || schema.type === 'number' ? (/^-?\d+(\.\d+)?$/.test(value.trim()) ? Number(value) : value) : value;
      for (const error of this.#run(`header:${name}`, schema, typed)) violations.push({ kind: 'header', message: `${status} header ${name}: ${JSON.stringify(value)} ${error}` });
    }
    return violations;
  }

  #run(key: string, schema: Json, value: unknown): string[] {
    let validate = this.#compiled.get(key);
    if (!validate) {
      validate = this.#ajv.compile(schema);
      this.#compiled.set(key, validate);
    }
    if (validate(value)) return [];
    return (validate.errors ?? []).slice(0, 5).map((error) => `${error.instancePath || '(root)'} ${error.message ?? 'is invalid'}${error.params && 'additionalProperty' in error.params ? ` (${String(error.params.additionalProperty)})` : ''}`);
  }

  /** Follows a local $ref to a response, header or parameter object. */
  #deref(node: Json): Json {
    let current = node;
    for (let hops = 0; typeof current.$ref === 'string' && hops < 10; hops++) {
      const pointer = current.$ref.replace(/^#\//, '').split('/');
      let target: unknown = this.document;
      for (const part of pointer) target = (target as Json | undefined)?.[part.replace(/~1/g, '/').replace(/~0/g, '~')];
      if (!target || typeof target !== 'object') break;
      current = target as Json;
    }
    return current;
  }
}
