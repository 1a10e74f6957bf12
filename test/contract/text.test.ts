// The text rule (every string a client sends is well-formed Unicode without U+0000) is
// stated in the schemas, not only in prose: each free-text member of a request body
// names the PlainText schema, whose pattern refuses what the server refuses, so that
// schema-driven tools and the mock agree with the server (whose answers the server's
// own tests check: the field, once, with the rule `text`).
import { describe, expect, test } from 'vitest';
import { textPattern } from '../../contract/text.ts';
import { deref, isObject, listOperations, loadDocument, onlyMediaType, type JsonObject } from './support/openapi.ts';
import { schemaValidator } from './support/schemas.ts';

const doc = loadDocument();
const validator = schemaValidator(doc);
const PLAIN_TEXT = '#/components/schemas/PlainText';

const namesPlainText = (schema: JsonObject) => Array.isArray(schema.allOf) && schema.allOf.some((s) => isObject(s) && s.$ref === PLAIN_TEXT);

/** Every string member of the request body schemas (through $ref, variants and nesting), with its dotted path. */
function requestStrings(): { where: string; schema: JsonObject }[] {
  const found: { where: string; schema: JsonObject }[] = [];
  const walk = (node: unknown, where: string, seen: Set<unknown>) => {
    const schema = deref<JsonObject>(doc, node);
    if (!isObject(schema) || seen.has(schema)) return;
    const inner = new Set(seen).add(schema);
    for (const key of ['oneOf', 'anyOf'] as const) for (const variant of (schema[key] ?? []) as unknown[]) walk(variant, where, inner);
    for (const [name, member] of Object.entries((schema.properties ?? {}) as JsonObject)) {
      const resolved = deref<JsonObject>(doc, member);
      if (resolved.type === 'string') found.push({ where: `${where}.${name}`, schema: resolved });
      else walk(member, `${where}.${name}`, inner);
    }
  };
  for (const entry of listOperations(doc).filter((e) => e.operation.requestBody !== undefined)) {
    walk(onlyMediaType(doc, entry.operation.requestBody).mediaType.schema, `${entry.operation.operationId} body`, new Set());
  }
  return found;
}

const strings = requestStrings();
// Free text: a string whose value set no enum, const, format or pattern of its own closes.
const freeText = strings.filter(({ schema }) => !('enum' in schema) && !('const' in schema) && !('format' in schema) && !('pattern' in schema));
const memberOf = (where: string) => where.split('.').at(-1)!;

describe('the text rule in the schemas', () => {
  test('finds the free-text members of the request bodies', () => {
    expect(new Set(freeText.map(({ where }) => memberOf(where)))).toEqual(new Set(['name', 'prompt', 'avatar_id', 'script']));
  });

  test.each(freeText)('$where names PlainText', ({ schema }) => {
    expect(namesPlainText(schema)).toBe(true);
  });

  test.each(strings.filter(({ schema }) => !namesPlainText(schema)))('$where, which does not name it, admits no U+0000 by its own rule', ({ schema }) => {
    expect(validator.validate(schema, 'x\u0000')).not.toEqual([]);
  });

  test.each([
    ['U+0000', 'Ana\u0000'],
    ['U+0000 alone', '\u0000'],
    ['a lone high surrogate', 'A portrait \ud800'],
    ['a lone low surrogate', '\udc00 and more'],
    ['a low surrogate before a high one', '\udc00\ud800'],
  ])('each free-text member refuses %s, by its pattern', (_what, value) => {
    for (const { where, schema } of freeText) {
      expect(validator.validate(schema, value), where).toContainEqual(expect.objectContaining({ keyword: 'pattern', params: { pattern: textPattern() } }));
    }
  });

  test.each([
    ['letters beyond ASCII', 'Zoë, 東京'],
    ['a character outside the BMP (a surrogate pair)', 'Great 😀'],
    ['other control characters', 'tab\there\nline'],
  ])('each free-text member takes %s', (_what, value) => {
    for (const { where, schema } of freeText) expect(validator.validate(schema, value), where).toEqual([]);
  });

  test('the pattern means the same without the u flag, for tools that read it as UTF-16 code units', () => {
    const units = new RegExp(textPattern());

    expect(['Great 😀', 'Zoë', ''].map((s) => units.test(s))).toEqual([true, true, true]);
    expect(['Ana\u0000', '\ud800', '\udc00x'].map((s) => units.test(s))).toEqual([false, false, false]);
  });
});
