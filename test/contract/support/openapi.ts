// Reads generated/openapi.json, the bundle every contract test checks, and walks it.
// The tables of the tests are built from here rather than written by hand, so a new
// operation, webhook or example is covered the day it lands in the contract.
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

export const ROOT = resolve(import.meta.dirname, '..', '..', '..');
export const BUNDLE = join(ROOT, 'generated', 'openapi.json');

export type JsonObject = { [key: string]: unknown };

export interface MediaType {
  schema?: JsonObject;
  example?: unknown;
  examples?: Record<string, unknown>;
}

export interface Operation {
  operationId?: string;
  summary?: string;
  tags?: string[];
  parameters?: unknown[];
  requestBody?: unknown;
  responses?: Record<string, unknown>;
}

export interface Document extends JsonObject {
  openapi: string;
  tags?: { name: string }[];
  paths: Record<string, Record<string, unknown>>;
  webhooks?: Record<string, Record<string, unknown>>;
  components: {
    schemas: Record<string, JsonObject>;
    responses?: Record<string, unknown>;
    [kind: string]: unknown;
  };
}

export interface OperationEntry {
  method: string;
  path: string;
  operation: Operation;
}

export interface WebhookEntry {
  name: string;
  method: string;
  operation: Operation;
}

// The HTTP methods a path item may hold (OpenAPI 3.1 §4.8.9); other keys such as
// `parameters` or `summary` are not operations.
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

export function loadDocument(): Document {
  return JSON.parse(readFileSync(BUNDLE, 'utf8')) as Document;
}

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

// The bundle only holds local references (`#/components/...`); a chain of them is
// followed to the object it names.
export function deref<T>(doc: Document, node: unknown): T {
  let current = node;
  for (let hops = 0; isObject(current) && typeof current.$ref === 'string'; hops++) {
    if (hops > 32) throw new Error(`Reference loop at ${current.$ref}`);
    current = pointer(doc, current.$ref);
  }
  return current as T;
}

function pointer(doc: Document, ref: string): unknown {
  if (!ref.startsWith('#/')) throw new Error(`Not a local reference: ${ref}`);
  return ref
    .slice(2)
    .split('/')
    .map((token) => token.replaceAll('~1', '/').replaceAll('~0', '~'))
    .reduce<unknown>((node, key) => {
      if (!isObject(node) || !(key in node)) throw new Error(`Unresolvable reference: ${ref}`);
      return node[key];
    }, doc);
}

export function listOperations(doc: Document): OperationEntry[] {
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    METHODS.filter((method) => isObject(item[method])).map((method) => ({
      method,
      path,
      operation: item[method] as Operation,
    })),
  );
}

export function listWebhooks(doc: Document): WebhookEntry[] {
  return Object.entries(doc.webhooks ?? {}).flatMap(([name, item]) =>
    METHODS.filter((method) => isObject(item[method])).map((method) => ({
      name,
      method,
      operation: item[method] as Operation,
    })),
  );
}

// Path-level and operation-level parameters, resolved; the operation's win on a clash
// of name and location, as OpenAPI says.
export function parametersOf(doc: Document, entry: OperationEntry): JsonObject[] {
  const shared = (doc.paths[entry.path]?.parameters ?? []) as unknown[];
  const own = entry.operation.parameters ?? [];
  const byKey = new Map<string, JsonObject>();
  for (const raw of [...shared, ...own]) {
    const parameter = deref<JsonObject>(doc, raw);
    byKey.set(`${String(parameter.in)}:${String(parameter.name)}`, parameter);
  }
  return [...byKey.values()];
}

// The path with every path parameter replaced by its documented example.
export function examplePath(doc: Document, entry: OperationEntry): string {
  return entry.path.replace(/\{([^}]+)\}/g, (_, name: string) => {
    const parameter = parametersOf(doc, entry).find((p) => p.in === 'path' && p.name === name);
    if (parameter?.example === undefined) throw new Error(`${entry.method} ${entry.path}: no example for {${name}}`);
    return encodeURIComponent(String(parameter.example));
  });
}

// The one documented 2xx of an operation (every operation here has exactly one).
export function successOf(doc: Document, operation: Operation): { status: number; response: JsonObject } {
  const codes = Object.keys(operation.responses ?? {}).filter((code) => /^2\d\d$/.test(code));
  if (codes.length !== 1) throw new Error(`${operation.operationId}: expected one 2xx response, found ${codes.join(', ') || 'none'}`);
  const code = codes[0] as string;
  return { status: Number(code), response: deref<JsonObject>(doc, operation.responses?.[code]) };
}

export function contentOf(doc: Document, holder: unknown): Record<string, MediaType> {
  const resolved = deref<JsonObject | undefined>(doc, holder);
  return (resolved?.content ?? {}) as Record<string, MediaType>;
}

// Named example values of a media type in document order (Prism serves the first one
// unless asked for another by name). A bare `example` is listed under "example".
export function examplesOf(doc: Document, mediaType: MediaType): [string, unknown][] {
  const named = Object.entries(mediaType.examples ?? {}).map(
    ([name, example]) => [name, deref<JsonObject>(doc, example).value] as [string, unknown],
  );
  return mediaType.example === undefined ? named : [...named, ['example', mediaType.example]];
}

// The single media type of a response or request body, with its examples.
export function onlyMediaType(doc: Document, holder: unknown): { type: string; mediaType: MediaType } {
  const entries = Object.entries(contentOf(doc, holder));
  if (entries.length !== 1) throw new Error(`expected one media type, found ${entries.map(([t]) => t).join(', ') || 'none'}`);
  const [type, mediaType] = entries[0] as [string, MediaType];
  return { type, mediaType };
}
