// Values for a request schema, as fast-check arbitraries: instances that should pass it
// and instances that break exactly one of its rules, each saying which member it broke
// and how. The schemas of a request body here are small (objects of strings, integers,
// enums and a oneOf of variants), so this covers the JSON Schema such bodies use rather
// than all of it; the one JSON-Schema bridge on npm targets fast-check 1 and is not kept.
// Whether a value is in fact valid is decided afterwards by the document's own
// validator, never by these guesses.
import fc from 'fast-check';
import { OpenApi, type Schema } from '../implementation/openapi-document.ts';

/** What one broken rule looks like: the member's path ('' for the body itself) and the rule. */
export interface Broken {
  value: unknown;
  /** Dotted path of the member that breaks a rule; '' when the body as a whole does. */
  member: string;
  rule: string;
}

/**
 * Arbitraries for a member chosen by name instead of by schema (URLs the runner
 * controls, say); undefined leaves an optional member out of valid instances.
 */
export type Overrides = Record<string, fc.Arbitrary<unknown> | undefined>;

/** Strings kept short enough to read in a report, with a boundary case now and then. */
const SHORT = 40;

export class SchemaArbitraries {
  readonly #doc: OpenApi;
  readonly #overrides: Overrides;

  constructor(doc: OpenApi, overrides: Overrides = {}) {
    this.#doc = doc;
    this.#overrides = overrides;
  }

  /** The variants of a schema: each oneOf/anyOf branch merged with the members beside it, or the schema itself. */
  variants(node: unknown): Schema[] {
    const schema = this.#doc.resolve(node) ?? {};
    const branches = (Array.isArray(schema.oneOf) ? schema.oneOf : Array.isArray(schema.anyOf) ? schema.anyOf : []) as unknown[];
    if (branches.length === 0) return [schema];
    const { oneOf: _oneOf, anyOf: _anyOf, discriminator: _discriminator, ...rest } = schema;
    return branches.map((branch) => {
      const resolved = this.#doc.resolve(branch) ?? {};
      return {
        ...rest,
        ...resolved,
        properties: { ...(isObject(rest.properties) ? rest.properties : {}), ...(isObject(resolved.properties) ? resolved.properties : {}) },
        required: [...new Set([...this.#doc.required(rest), ...this.#doc.required(resolved)])],
      };
    });
  }

  /** Instances the schema should accept. */
  valid(node: unknown, name = ''): fc.Arbitrary<unknown> {
    const override = this.#overrides[name];
    if (override) return override;
    const variants = this.variants(node);
    if (variants.length > 1) return fc.oneof(...variants.map((variant) => this.valid(variant, name)));
    const schema = variants[0] ?? {};
    if ('const' in schema) return fc.constant(schema.const);
    if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[]));
    switch (typeOf(schema)) {
      case 'object':
        return this.#validObject(schema);
      case 'integer':
        return fc.integer({ min: num(schema.minimum, -1_000_000), max: num(schema.maximum, 1_000_000) });
      case 'number':
        return fc.double({ min: num(schema.minimum, -1e6), max: num(schema.maximum, 1e6), noNaN: true, noDefaultInfinity: true });
      case 'boolean':
        return fc.boolean();
      case 'string':
        return this.#validString(schema);
      default:
        return fc.constant(null);
    }
  }

  /**
   * Instances that break one rule of the schema, with the member and the rule. Every
   * rule of every member of every variant is one equal choice, so a rule deep inside
   * (a nested member's bound) comes up as often as one at the top.
   */
  invalid(node: unknown, path = ''): fc.Arbitrary<Broken> {
    return fc.oneof(...this.#invalidOptions(node, path));
  }

  #invalidOptions(node: unknown, path: string): fc.Arbitrary<Broken>[] {
    return this.variants(node).flatMap((variant) => this.#invalidOf(variant, path));
  }

  #invalidOf(schema: Schema, path: string): fc.Arbitrary<Broken>[] {
    const broken = (rule: string, value: fc.Arbitrary<unknown>) => value.map((v) => ({ value: v, member: path, rule }));
    const out: fc.Arbitrary<Broken>[] = [broken('type', wrongType(typeOf(schema)))];
    if ('const' in schema) out.push(broken('const', fc.constantFrom('video', 'PROMPT', '', 'unknown')));
    if (Array.isArray(schema.enum)) {
      const allowed = schema.enum as unknown[];
      const strings = allowed.filter((v): v is string => typeof v === 'string');
      out.push(broken('enum', fc.oneof(fc.constantFrom(...strings.flatMap((v) => [v.toUpperCase(), v.toLowerCase(), ` ${v}`, `${v} `])), fc.string({ maxLength: 12 })).filter((v) => !allowed.includes(v))));
    }
    switch (typeOf(schema)) {
      case 'object':
        out.push(...this.#invalidObject(schema, path));
        break;
      case 'integer':
      case 'number': {
        // Just past the bound most often: that is where off-by-one mistakes live.
        if (typeof schema.minimum === 'number') out.push(broken('minimum', justPast(schema.minimum - 1, -1000)));
        if (typeof schema.maximum === 'number') out.push(broken('maximum', justPast(schema.maximum + 1, 1000)));
        if (typeOf(schema) === 'integer') out.push(broken('integer', fc.double({ min: num(schema.minimum, 0) + 0.1, max: num(schema.maximum, 1000) - 0.1, noNaN: true }).filter((v) => !Number.isInteger(v))));
        break;
      }
      case 'string': {
        if (typeof schema.minLength === 'number' && schema.minLength > 0) out.push(broken('minLength', fc.constant('')));
        if (typeof schema.maxLength === 'number') out.push(broken('maxLength', justPast(schema.maxLength + 1, 8).map((n) => 'x'.repeat(n))));
        if (schema.format === 'uri') out.push(broken('format', fc.constantFrom('not a url', 'example.com/no-scheme', '://missing', 'http//x')));
        break;
      }
    }
    return out;
  }

  #validObject(schema: Schema): fc.Arbitrary<unknown> {
    const properties = this.#doc.properties(schema);
    const required = this.#doc.required(schema);
    const model: Record<string, fc.Arbitrary<unknown>> = {};
    for (const [name, member] of properties) {
      // A member the runner cannot give a safe value (a URL it does not control) is left out.
      if (name in this.#overrides && this.#overrides[name] === undefined && !required.includes(name)) continue;
      model[name] = this.valid(member, name);
    }
    return fc.record(model, { requiredKeys: required.filter((name) => name in model) });
  }

  #invalidObject(schema: Schema, path: string): fc.Arbitrary<Broken>[] {
    const base = this.#validObject(schema) as fc.Arbitrary<Record<string, unknown>>;
    const properties = this.#doc.properties(schema);
    const required = this.#doc.required(schema);
    const at = (name: string) => (path ? `${path}.${name}` : name);
    const out: fc.Arbitrary<Broken>[] = [];
    for (const name of required) {
      out.push(base.map((value) => ({ value: without(value, name), member: at(name), rule: 'required' })));
    }
    for (const [name, member] of properties) {
      // Broken values are never outside addresses, so even a member without safe valid values is broken.
      for (const option of this.#invalidOptions(member, at(name))) {
        out.push(fc.tuple(base, option).map(([value, broken]) => ({ ...broken, value: { ...value, [name]: broken.value } })));
      }
    }
    if (schema.additionalProperties === false) {
      const extra = fc.constantFrom('extra', 'Name', 'avatarId', 'webhookUrl', '__proto__x', 'callback_url').filter((name) => !properties.has(name));
      out.push(fc.tuple(base, extra, fc.jsonValue({ maxDepth: 1 })).map(([value, name, v]) => ({ value: { ...value, [name]: v }, member: at(name), rule: 'additionalProperties' })));
    }
    return out;
  }

  #validString(schema: Schema): fc.Arbitrary<string> {
    const min = num(schema.minLength, 0);
    const max = num(schema.maxLength, 10_000);
    if (schema.format === 'uri') {
      return fc.webSegment().map((segment) => `https://images.example.com/${encodeURIComponent(segment) || 'p'}.jpg`.slice(0, max));
    }
    // Mostly short text in any script, sometimes exactly at the bounds.
    return fc.oneof(
      { weight: 6, arbitrary: fc.string({ unit: 'grapheme', minLength: Math.max(min, 1), maxLength: Math.max(Math.min(max, SHORT), Math.max(min, 1)) }) },
      { weight: 1, arbitrary: fc.constant('x'.repeat(Math.max(min, 1))) },
      { weight: 1, arbitrary: fc.constant('y'.repeat(max)) },
    );
  }
}

/** `first`, the first value past a bound, twice as often as any other up to `spread` further. */
function justPast(first: number, spread: number): fc.Arbitrary<number> {
  const range = spread > 0 ? fc.integer({ min: first, max: first + spread }) : fc.integer({ min: first + spread, max: first });
  return fc.oneof({ weight: 2, arbitrary: fc.constant(first) }, { weight: 1, arbitrary: range });
}

function typeOf(schema: Schema): string | undefined {
  if (typeof schema.type === 'string') return schema.type;
  if (isObject(schema.properties)) return 'object';
  return undefined;
}

/** A value of another JSON type than the one named. */
function wrongType(type: string | undefined): fc.Arbitrary<unknown> {
  const all: Record<string, fc.Arbitrary<unknown>> = {
    string: fc.string({ maxLength: 8 }),
    integer: fc.integer({ min: -5, max: 500 }),
    number: fc.constant(1.5),
    boolean: fc.boolean(),
    null: fc.constant(null),
    array: fc.array(fc.string({ maxLength: 4 }), { maxLength: 2 }),
    object: fc.dictionary(fc.string({ minLength: 1, maxLength: 4 }), fc.string({ maxLength: 4 }), { maxKeys: 2, noNullPrototype: true }),
  };
  const skip = type === 'number' ? ['number', 'integer'] : type === 'integer' ? ['integer'] : [type ?? ''];
  return fc.oneof(...Object.entries(all).filter(([name]) => !skip.includes(name)).map(([, arbitrary]) => arbitrary));
}

function without(value: Record<string, unknown>, name: string): Record<string, unknown> {
  const copy = { ...value };
  delete copy[name];
  return copy;
}

function num(value: unknown, fallback: number): number {
  return typeof value === 'number' ? value : fallback;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
