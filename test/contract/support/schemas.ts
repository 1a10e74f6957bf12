// JSON Schema 2020-12 validation of values against the schemas of the bundle, with the
// project's one Ajv setup (contract/schemas.ts).
import type { ErrorObject, ValidateFunction } from 'ajv/dist/2020.js';
import { createContractAjv, type JsonObject as ContractObject } from '../../../contract/schemas.ts';
import type { Document, JsonObject } from './openapi.ts';

export interface SchemaValidator {
  validate(schema: JsonObject, value: unknown): ErrorObject[];
}

export function schemaValidator(doc: Document): SchemaValidator {
  const ajv = createContractAjv(doc as unknown as ContractObject);
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
