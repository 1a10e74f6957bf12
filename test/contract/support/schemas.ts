// JSON Schema 2020-12 validation of values against the schemas of the bundle.
// Ajv's strict mode refuses the OpenAPI document as a schema (`components` is no
// keyword), so each components.schemas entry is registered under the ID its
// references use, `#/components/schemas/Name`, and only schemas are compiled.
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import formats from 'ajv-formats';
import { isObject, type Document, type JsonObject } from './openapi.ts';

export interface SchemaValidator {
  validate(schema: JsonObject, value: unknown): ErrorObject[];
}

export function schemaValidator(doc: Document): SchemaValidator {
  // Strict, so a misspelt keyword in the contract fails here instead of validating
  // nothing; the document's own `x-` annotations are declared as keywords.
  const ajv = new Ajv2020({ strict: true, allErrors: true });
  formats.default(ajv);
  for (const keyword of extensionKeywords(doc.components.schemas)) ajv.addKeyword(keyword);
  for (const [name, schema] of Object.entries(doc.components.schemas)) ajv.addSchema(schema, `#/components/schemas/${name}`);

  const compiled = new Map<JsonObject, ValidateFunction>();
  return {
    validate(schema, value) {
      let check = compiled.get(schema);
      if (!check) {
        check = ajv.compile(schema);
        compiled.set(schema, check);
      }
      return check(value) ? [] : [...(check.errors ?? [])];
    },
  };
}

function extensionKeywords(node: unknown, found = new Set<string>()): Set<string> {
  if (Array.isArray(node)) for (const item of node) extensionKeywords(item, found);
  else if (isObject(node)) {
    for (const [key, value] of Object.entries(node)) {
      if (key.startsWith('x-')) found.add(key);
      extensionKeywords(value, found);
    }
  }
  return found;
}
