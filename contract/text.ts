// The rule every string a client sends keeps: well-formed Unicode without U+0000. The
// contract states it once, as the pattern of its PlainText schema, which the members of
// free text name; the server reads it here, to check every string of a body (member
// names included) and to word a broken pattern as the rule `text`.
import { loadBundle, type JsonObject } from './schemas.ts';

/** The schema whose pattern states the rule. */
export const TEXT_SCHEMA = 'PlainText';

/** The pattern of the rule, as the contract writes it (an ECMA-262 regular expression, read with the `u` flag). */
export function textPattern(bundle: JsonObject = loadBundle()): string {
  const schema = ((bundle.components as JsonObject | undefined)?.schemas as Record<string, JsonObject> | undefined)?.[TEXT_SCHEMA];
  if (typeof schema?.pattern !== 'string') throw new Error(`the contract's ${TEXT_SCHEMA} schema states no pattern`);
  return schema.pattern;
}
