// The bundled contract as JSON Schema, for everyone who validates against it: the
// server (requests), the conformance runner (responses) and the tests. One setup, so
// they can never disagree about what the contract allows.
import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

// ajv-formats is CommonJS; under Node's ESM loader its default export is the function.
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

export type JsonObject = Record<string, unknown>;

/** The Redocly bundle in generated/, which every part of the project loads. */
export const BUNDLE_PATH = new URL('../generated/openapi.json', import.meta.url);

export function loadBundle(path: string | URL = BUNDLE_PATH): JsonObject {
  return JSON.parse(readFileSync(path, 'utf8')) as JsonObject;
}

function vendorKeywords(node: unknown, found = new Set<string>()): Set<string> {
  if (Array.isArray(node)) for (const item of node) vendorKeywords(item, found);
  else if (node && typeof node === 'object') {
    for (const [key, value] of Object.entries(node)) {
      if (key.startsWith('x-')) found.add(key);
      vendorKeywords(value, found);
    }
  }
  return found;
}

/**
 * The schema with every discriminator's `mapping` left out. Ajv refuses `mapping`; it
 * finds each variant by the `const` of its tag, which is what the mapping states for the
 * tools that read it (docs, generators).
 */
function withoutMappings(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(withoutMappings);
  if (!node || typeof node !== 'object') return node;
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === 'discriminator' && value && typeof value === 'object') {
      const { mapping: _mapping, ...rest } = value as JsonObject;
      out[key] = rest;
    } else out[key] = withoutMappings(value);
  }
  return out;
}

/**
 * Ajv 2020-12 with every components.schemas entry registered under the ID its $refs
 * use (`#/components/schemas/Name`). Ajv's strict mode refuses the OpenAPI document
 * itself as a schema, so only schemas are compiled; strict stays on so that a misspelt
 * keyword in the contract fails loudly, with the contract's own `x-` annotations
 * declared as keywords.
 */
export function createContractAjv(bundle: JsonObject = loadBundle()): Ajv2020 {
  const schemas = ((bundle.components as JsonObject | undefined)?.schemas ?? {}) as Record<string, JsonObject>;
  // discriminator: a oneOf told apart by a tag is checked against the one variant its
  // tag names, so a bad body gets that variant's errors rather than every variant's.
  const ajv = new Ajv2020({ strict: true, strictTypes: false, strictRequired: false, allErrors: true, discriminator: true });
  addFormats(ajv);
  for (const keyword of vendorKeywords(schemas)) ajv.addKeyword({ keyword, schemaType: ['array', 'string', 'object', 'boolean', 'number'] });
  for (const [name, schema] of Object.entries(schemas)) ajv.addSchema(withoutMappings(schema) as JsonObject, `#/components/schemas/${name}`);
  return ajv;
}
