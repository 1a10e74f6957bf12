// An OpenAPI 3 document as the profile draft reads it: loaded from a file or an http(s)
// URL (YAML or JSON), whole or split into files joined by relative $refs, every $ref
// replaced by what it points at, and schema lookups that follow allOf and nullable
// oneOf/anyOf wherever they appear.
import { readFile } from 'node:fs/promises';
import { relative, resolve as resolvePath } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import jsonpointer from 'jsonpointer';
import { parse as parseYaml } from 'yaml';
import type { Json } from './profile.ts';

export type Schema = Record<string, unknown>;

/** A property found inside a schema: where it is in an instance, and its schema. */
export interface Member {
  pointer: string;
  name: string;
  schema: Schema;
}

/** A document that cannot be drafted from: unreadable, not YAML or JSON, or not OpenAPI. */
export class DocumentError extends Error {
  override name = 'DocumentError';
}


/** Schema lookups that follow local $refs, allOf and nullable oneOf/anyOf wherever they appear. */
export class OpenApi {
  readonly doc: Json;

  constructor(doc: Json) {
    this.doc = doc;
  }

  /** The object a node stands for, after its $ref chain; undefined for anything else. */
  resolve(node: unknown): Schema | undefined {
    let current = node;
    // A bound instead of a visited set: a ref chain longer than this is a cycle.
    for (let hops = 0; hops < 32 && isObject(current) && typeof current.$ref === 'string'; hops++) {
      const target = localRef(this.doc, current.$ref);
      if (target === undefined) return undefined;
      current = target;
    }
    return isObject(current) ? current : undefined;
  }

  /**
   * The properties an instance of the schema may have, in document order. allOf parts
   * add theirs; oneOf/anyOf branches add theirs too, so a nullable record or a union of
   * records still shows its members.
   */
  properties(node: unknown, seen = new Set<Schema>()): Map<string, Schema> {
    const out = new Map<string, Schema>();
    const schema = this.resolve(node);
    if (!schema || seen.has(schema)) return out;
    seen.add(schema);
    for (const [name, value] of Object.entries(isObject(schema.properties) ? schema.properties : {})) {
      const resolved = this.resolve(value);
      if (resolved && !out.has(name)) out.set(name, resolved);
    }
    for (const part of this.parts(schema)) {
      for (const [name, value] of this.properties(part, seen)) if (!out.has(name)) out.set(name, value);
    }
    return out;
  }

  /** Every property down to `depth` levels, breadth first, with its pointer. */
  members(node: unknown, depth: number): Member[] {
    const out: Member[] = [];
    let level: Member[] = [{ pointer: '', name: '', schema: this.resolve(node) ?? {} }];
    for (let d = 0; d < depth; d++) {
      level = level.flatMap((parent) => [...this.properties(parent.schema)].map(([name, schema]) => ({ pointer: `${parent.pointer}/${escape(name)}`, name, schema })));
      out.push(...level);
    }
    return out;
  }

  /** The values a schema allows when it lists them (enum, const), across its parts. */
  values(node: unknown, seen = new Set<Schema>()): unknown[] {
    const schema = this.resolve(node);
    if (!schema || seen.has(schema)) return [];
    seen.add(schema);
    const own = [...(Array.isArray(schema.enum) ? (schema.enum as unknown[]) : []), ...('const' in schema ? [schema.const] : [])];
    return [...own, ...this.parts(schema).flatMap((part) => this.values(part, seen))];
  }

  /** The members an instance must have: its own required list and its allOf parts'. */
  required(node: unknown, seen = new Set<Schema>()): string[] {
    const schema = this.resolve(node);
    if (!schema || seen.has(schema)) return [];
    seen.add(schema);
    const own = Array.isArray(schema.required) ? (schema.required as unknown[]).filter((name): name is string => typeof name === 'string') : [];
    const parts = Array.isArray(schema.allOf) ? (schema.allOf as unknown[]) : [];
    return [...new Set([...own, ...parts.flatMap((part) => this.required(part, seen))])];
  }

  /** The JSON types a schema names, across its parts. */
  types(node: unknown, seen = new Set<Schema>()): string[] {
    const schema = this.resolve(node);
    if (!schema || seen.has(schema)) return [];
    seen.add(schema);
    const own = typeof schema.type === 'string' ? [schema.type] : Array.isArray(schema.type) ? (schema.type as unknown[]).filter((t): t is string => typeof t === 'string') : [];
    return [...own, ...this.parts(schema).flatMap((part) => this.types(part, seen))];
  }

  isNumber(node: unknown): boolean {
    return this.types(node).some((type) => type === 'integer' || type === 'number');
  }

  isString(node: unknown): boolean {
    return this.types(node).includes('string') || this.values(node).some((value) => typeof value === 'string');
  }

  /** The operation at a path of the source's interface, whatever its parameters are called. */
  operation(method: string, path: string): Schema | undefined {
    const want = normalizePath(path);
    const paths = this.resolve(this.doc.paths) ?? {};
    for (const [key, item] of Object.entries(paths)) {
      const candidate = normalizePath(key);
      // The servers' URL may carry /v1 and leave it out of the paths.
      if (candidate === want || candidate === want.replace(/^\/v1(?=\/)/, '')) return this.resolve(this.resolve(item)?.[method]);
    }
    return undefined;
  }

  /** The responses of an operation by status code, in document order. */
  responses(operation: Schema | undefined): [string, Schema][] {
    const responses = this.resolve(operation?.responses) ?? {};
    return Object.entries(responses).flatMap(([code, response]) => {
      const resolved = this.resolve(response);
      return resolved ? [[code, resolved] as [string, Schema]] : [];
    });
  }

  /** The JSON schema of a response or a request body (application/json or any +json). */
  jsonSchema(message: unknown): Schema | undefined {
    return this.resolve(this.jsonContent(message)?.schema);
  }

  /** The examples a response shows for its JSON body. */
  examples(message: unknown): unknown[] {
    const content = this.jsonContent(message);
    if (!content) return [];
    const named = Object.values(this.resolve(content.examples) ?? {}).map((example) => this.resolve(example)?.value);
    return [content.example, ...named].filter((value) => value !== undefined);
  }

  private jsonContent(message: unknown): Schema | undefined {
    const content = this.resolve(this.resolve(message)?.content);
    if (!content) return undefined;
    const key = Object.keys(content).find((type) => /[/+]json\b/i.test(type)) ?? Object.keys(content)[0];
    return key === undefined ? undefined : this.resolve(content[key]);
  }

  private parts(schema: Schema): unknown[] {
    const branches = [schema.allOf, schema.oneOf, schema.anyOf].flatMap((list) => (Array.isArray(list) ? (list as unknown[]) : []));
    return branches.filter((branch) => !(this.types(branch).length === 1 && this.types(branch)[0] === 'null'));
  }
}

export function isObject(value: unknown): value is Schema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function localRef(doc: Json, ref: string): unknown {
  if (!ref.startsWith('#')) return undefined;
  try {
    return jsonpointer.get(doc, decodeURIComponent(ref.slice(1)));
  } catch {
    return undefined;
  }
}

export function escape(name: string): string {
  return name.replace(/~/g, '~0').replace(/\//g, '~1');
}

export function normalizePath(path: string): string {
  return path.replace(/\{[^}]*\}/g, '{}').replace(/\/+$/, '');
}

/**
 * Reads an OpenAPI document (YAML or JSON) from a file or an http(s) URL, with the files
 * its relative $refs name (read from beside it, or fetched from the same place), and
 * every $ref resolved.
 */
export async function loadDocument(fileOrUrl: string): Promise<unknown> {
  const root = /^https?:\/\//i.test(fileOrUrl) ? new URL(fileOrUrl) : pathToFileURL(resolvePath(fileOrUrl));
  root.hash = '';
  return dereference(await loadFiles(root.href, fileOrUrl), root.href);
}

/**
 * The root document and every file its relative $refs reach, by URL. Each $ref that
 * leaves its own file is rewritten to the absolute URL it names, so that resolving it
 * later needs no knowledge of which file it came from; the root's own `#/...` refs stay.
 */
async function loadFiles(root: string, name: string): Promise<Map<string, unknown>> {
  const files = new Map<string, unknown>();
  const queued = new Set([root]);
  let wave: { url: string; name: string; from?: string }[] = [{ url: root, name }];
  while (wave.length > 0) {
    const loaded = await Promise.all(wave.map(async (file) => [file.url, parseDocument(await readSource(file), file.name)] as const));
    wave = [];
    for (const [url, document] of loaded) {
      files.set(url, document);
      for (const target of rebaseRefs(document, url, url === root)) {
        if (queued.has(target)) continue;
        queued.add(target);
        wave.push({ url: target, name: shown(target), from: url === root ? name : shown(url) });
      }
    }
  }
  return files;
}

/** Rewrites the document's $refs to other files (and, outside the root, its own) as absolute URLs; returns the files they name. */
function rebaseRefs(document: unknown, base: string, isRoot: boolean): string[] {
  const targets: string[] = [];
  const seen = new Set<unknown>();
  const walk = (node: unknown): void => {
    if (typeof node !== 'object' || node === null || seen.has(node)) return;
    seen.add(node);
    if (isObject(node) && typeof node.$ref === 'string') {
      const ref = node.$ref;
      // An absolute URL (https:, urn:, ...) is left as it is: nothing is fetched that the document did not reach relatively.
      // A network-path ref (//host/...) names another host: absolute too.
      if (ref.startsWith('#') ? !isRoot : !/^([a-z][a-z\d+.-]*:|\/\/)/i.test(ref)) {
        const target = new URL(ref, base);
        node.$ref = target.href;
        target.hash = '';
        if (target.href !== base) targets.push(target.href);
      }
    }
    for (const value of Object.values(node)) walk(value);
  };
  walk(document);
  return targets;
}

function parseDocument(text: string, name: string): unknown {
  try {
    return parseYaml(text, { maxAliasCount: -1 });
  } catch (error) {
    throw new DocumentError(`${name} is neither YAML nor JSON (${firstLine(error)})`);
  }
}

/** A file's path from the working directory, or a URL as it is: how an error names it. */
function shown(url: string): string {
  return url.startsWith('file:') ? relative(process.cwd(), fileURLToPath(url)) : url;
}

async function readSource(file: { url: string; name: string; from?: string }): Promise<string> {
  const referenced = file.from === undefined ? '' : `, referenced from ${file.from}`;
  if (!file.url.startsWith('file:')) return fetchText(file.url, referenced);
  try {
    return await readFile(fileURLToPath(file.url), 'utf8');
  } catch (error) {
    throw new DocumentError(`cannot read ${file.name}${referenced} (${firstLine(error)})`);
  }
}

async function fetchText(url: string, referenced = ''): Promise<string> {
  let response: Response;
  try {
    response = await fetch(url, { headers: { accept: 'application/yaml, application/json;q=0.9, */*;q=0.1' }, signal: AbortSignal.timeout(30_000) });
  } catch (error) {
    throw new DocumentError(`cannot fetch ${url}${referenced} (${firstLine(error)})`);
  }
  if (!response.ok) throw new DocumentError(`cannot fetch ${url}${referenced} (HTTP ${response.status})`);
  return response.text();
}

export function firstLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split('\n')[0] ?? '';
}

/**
 * Replaces every $ref by the node it points at, in place: `#/...` in the root, an
 * absolute URL (as loadFiles leaves them) in the file of that URL. The same node is
 * shared by every ref to it, so recursive schemas become cycles rather than endless
 * copies. A ref to nothing loaded is left as it is.
 */
function dereference(files: Map<string, unknown>, root: string): unknown {
  const document = files.get(root);
  if (!isObject(document)) return document;
  const lookup = (ref: string): unknown => {
    const hash = ref.indexOf('#');
    const file = hash === 0 ? document : files.get(hash < 0 ? ref : ref.slice(0, hash));
    if (file === undefined || hash < 0 || hash === ref.length - 1) return file;
    return localRef(file as Json, ref.slice(hash));
  };
  const target = (node: unknown): unknown => {
    let current = node;
    for (let hops = 0; hops < 32 && isObject(current) && typeof current.$ref === 'string'; hops++) {
      const next = lookup(current.$ref);
      if (next === undefined) return current;
      // OpenAPI 3.1 lets a $ref carry siblings (description, ...): keep them over the target.
      const siblings = Object.fromEntries(Object.entries(current).filter(([key]) => key !== '$ref'));
      current = Object.keys(siblings).length > 0 && isObject(next) ? { ...next, ...siblings } : next;
    }
    return current;
  };
  const seen = new Set<unknown>();
  const walk = (node: unknown): void => {
    if (typeof node !== 'object' || node === null || seen.has(node)) return;
    seen.add(node);
    const entries: [string | number, unknown][] = Array.isArray(node) ? node.map((value, index) => [index, value]) : Object.entries(node);
    for (const [key, value] of entries) {
      const resolved = target(value);
      (node as Record<string | number, unknown>)[key] = resolved;
      walk(resolved);
    }
  };
  walk(document);
  return document;
}
