// Properties of the bundle that lint does not check: the OpenAPI version, the shape of
// every clause ID, a README row for every decision taken where the source is silent,
// and that every example in the document (bodies, parameters, headers) is valid under
// JSON Schema 2020-12 as a strict validator reads it, not only as Redocly's lint does.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import {
  ROOT,
  contentOf,
  deref,
  examplesOf,
  isObject,
  listOperations,
  listWebhooks,
  loadDocument,
  type JsonObject,
  type MediaType,
  type Operation,
} from './support/openapi.ts';
import { Validator } from '@seriousme/openapi-schema-validator';
import { schemaValidator } from './support/schemas.ts';

const CLAUSE_ID = /^[A-Z]+(-[A-Z0-9]+)+$/;
// Decisions the document takes where the source is silent; each needs its "why".
const DECISIONS = [
  'ND-STATES',
  'ND-CREATE-RESPONSE',
  'ND-AVATAR-FIELDS',
  'ND-VIDEO-REQUEST',
  'ND-VIDEO-FIELDS',
  'ND-ME',
  'ND-AUTH-PRESENTATION',
  'ND-ENVELOPE',
  'ND-TIMESTAMP-AGE',
  'ND-DELIVERY',
  'ND-ERROR-BODY',
  'ND-ERRORS',
  'ND-CREDIT-COST',
  'ND-COMPAT',
  'ND-QUERY',
  'ND-RATELIMIT-FIELDS',
  'ND-STANDARD-WEBHOOKS',
];

const doc = loadDocument();
const validator = schemaValidator(doc);

interface MediaTypeSite {
  where: string;
  mediaType: MediaType;
}

interface ValueSite {
  where: string;
  name: string;
  schema: JsonObject;
  value: unknown;
}

// Every request and response body of operations, webhooks and shared components. A
// shared response reached from several operations is listed once, under its first name.
function mediaTypeSites(): MediaTypeSite[] {
  const seen = new Set<MediaType>();
  const sites: MediaTypeSite[] = [];
  const add = (where: string, holder: unknown) => {
    for (const [type, mediaType] of Object.entries(contentOf(doc, holder))) {
      if (seen.has(mediaType)) continue;
      seen.add(mediaType);
      sites.push({ where: `${where} ${type}`, mediaType });
    }
  };
  const operations: [string, Operation][] = [
    ...listOperations(doc).map(({ method, path, operation }) => [`${method.toUpperCase()} ${path}`, operation] as [string, Operation]),
    ...listWebhooks(doc).map(({ name, operation }) => [`webhook ${name}`, operation] as [string, Operation]),
  ];
  for (const [where, operation] of operations) {
    if (operation.requestBody !== undefined) add(`${where} request`, operation.requestBody);
    for (const [status, response] of Object.entries(operation.responses ?? {})) add(`${where} ${status}`, response);
  }
  for (const [kind, label] of [['responses', 'response'], ['requestBodies', 'request body']] as const) {
    for (const [name, holder] of Object.entries((doc.components[kind] ?? {}) as Record<string, unknown>)) add(`components ${label} ${name}`, holder);
  }
  return sites;
}

function bodyExampleSites(sites: MediaTypeSite[]): ValueSite[] {
  return sites.flatMap(({ where, mediaType }) =>
    examplesOf(doc, mediaType).map(([name, value]) => ({ where, name, schema: mediaType.schema ?? {}, value })),
  );
}

// `example`/`examples` of every parameter and header, inline or shared.
function parameterAndHeaderExampleSites(): ValueSite[] {
  const seen = new Set<JsonObject>();
  const sites: ValueSite[] = [];
  const add = (where: string, raw: unknown) => {
    const holder = deref<JsonObject>(doc, raw);
    if (seen.has(holder) || !isObject(holder.schema)) return;
    seen.add(holder);
    for (const [name, value] of examplesOf(doc, holder as MediaType)) sites.push({ where, name, schema: holder.schema, value });
  };
  for (const [name, parameter] of Object.entries((doc.components.parameters ?? {}) as Record<string, unknown>)) add(`parameter ${name}`, parameter);
  for (const [name, header] of Object.entries((doc.components.headers ?? {}) as Record<string, unknown>)) add(`header ${name}`, header);
  for (const { method, path, operation } of listOperations(doc)) {
    const where = `${method.toUpperCase()} ${path}`;
    for (const parameter of [...((doc.paths[path]?.parameters ?? []) as unknown[]), ...(operation.parameters ?? [])]) add(`${where} parameter`, parameter);
    for (const [status, response] of Object.entries(operation.responses ?? {})) {
      for (const [name, header] of Object.entries((deref<JsonObject>(doc, response).headers ?? {}) as Record<string, unknown>)) add(`${where} ${status} header ${name}`, header);
    }
  }
  for (const { name, operation } of listWebhooks(doc)) {
    for (const parameter of operation.parameters ?? []) add(`webhook ${name} parameter`, parameter);
  }
  return sites;
}

// Every `x-clauses` member anywhere in the bundle, with its JSON pointer.
function clauseLists(node: unknown, at = '#', found: { at: string; value: unknown }[] = []) {
  if (Array.isArray(node)) node.forEach((item, i) => clauseLists(item, `${at}/${i}`, found));
  else if (isObject(node)) {
    for (const [key, value] of Object.entries(node)) {
      const here = `${at}/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`;
      if (key === 'x-clauses') found.push({ at: here, value });
      else clauseLists(value, here, found);
    }
  }
  return found;
}

// IDs with a row in the decisions table: a first cell ND-… followed by non-empty
// decision, why and compared cells.
function decisionRows(): Set<string> {
  const readme = readFileSync(join(ROOT, 'openapi', 'README.md'), 'utf8');
  const rows = new Set<string>();
  for (const line of readme.split('\n')) {
    const cells = line.split('|').slice(1, -1).map((cell) => cell.trim());
    const [id, ...rest] = cells;
    if (id && /^ND-[A-Z0-9-]+$/.test(id) && rest.length >= 3 && rest.every((cell) => cell.length > 0)) rows.add(id);
  }
  return rows;
}

const mediaTypes = mediaTypeSites();
const bodyExamples = bodyExampleSites(mediaTypes);
const otherExamples = parameterAndHeaderExampleSites();

describe('generated/openapi.json', () => {
  test('is an OpenAPI 3.1 document', () => {
    expect(doc.openapi).toMatch(/^3\.1\.\d+$/);
  });

  test('every x-clauses list is a non-empty list of well-formed clause IDs', () => {
    const lists = clauseLists(doc);

    const malformed = lists.filter(
      ({ value }) => !Array.isArray(value) || value.length === 0 || value.some((id) => typeof id !== 'string' || !CLAUSE_ID.test(id)),
    );

    expect(lists.length).toBeGreaterThan(0);
    expect(malformed).toEqual([]);
  });

  describe('decisions table of openapi/README.md', () => {
    const rows = decisionRows();

    test.each(DECISIONS)('has a row for %s', (id) => {
      expect(rows.has(id)).toBe(true);
    });

    test('has a row for every ND- ID the document mentions', () => {
      const mentioned = [...new Set(JSON.stringify(doc).match(/\bND-[A-Z0-9]+(?:-[A-Z0-9]+)*/g) ?? [])];

      const missing = mentioned.filter((id) => !rows.has(id));

      expect(mentioned.length).toBeGreaterThan(0);
      expect(missing).toEqual([]);
    });
  });

  describe('examples', () => {
    test('were found for bodies, parameters and headers', () => {
      expect(mediaTypes.length).toBeGreaterThan(0);
      expect(bodyExamples.length).toBeGreaterThanOrEqual(mediaTypes.length);
      expect(otherExamples.length).toBeGreaterThan(0);
    });

    test('are checked by a validator that refuses what the schemas forbid', () => {
      const request = { $ref: '#/components/schemas/AvatarCreateRequest' };
      const props = { type: 'props', name: 'Fitness coach', ethnicity: 'Hispanic', sex: 'male' };

      const tooYoung = validator.validate(request, { ...props, age: 19 });
      const oldEnough = validator.validate(request, { ...props, age: 20 });

      expect(tooYoung).toContainEqual(expect.objectContaining({ instancePath: '/age', keyword: 'minimum' }));
      expect(oldEnough).toEqual([]);
    });

    test.each(mediaTypes)('$where has at least one example', ({ mediaType }) => {
      expect(examplesOf(doc, mediaType).length).toBeGreaterThan(0);
    });

    test.each(bodyExamples)('$where example "$name" is valid against its schema', ({ schema, value }) => {
      expect(validator.validate(schema, value)).toEqual([]);
    });

    test.each(otherExamples)('$where example "$name" is valid against its schema', ({ schema, value }) => {
      expect(validator.validate(schema, value)).toEqual([]);
    });
  });
});

describe('rate-limit header examples', () => {
  // The source's default per-minute limits (RL-BUCKETS), and the sandbox clock's own bucket.
  const MINUTE_LIMIT: Record<string, number> = { read: 120, generation: 10, sandbox: 600 };
  const cases = listOperations(doc).flatMap((entry) =>
    Object.entries(entry.operation.responses ?? {})
      .map(([status, response]) => ({ status, headers: (deref<JsonObject>(doc, response).headers ?? {}) as Record<string, unknown> }))
      .filter(({ headers }) => 'RateLimit-Limit' in headers)
      .map(({ status, headers }) => ({
        name: `${entry.method.toUpperCase()} ${entry.path} ${status}`,
        bucket: String((entry.operation as JsonObject)['x-rate-limit-bucket']),
        status,
        headers,
      })),
  );

  test('cover the success and the error answers of every bucket', () => {
    const covered = new Set(cases.map(({ bucket, status }) => `${bucket} ${status}`));

    expect([...covered]).toEqual(
      expect.arrayContaining(['read 200', 'read 429', 'generation 202', 'generation 400', 'generation 413', 'generation 415', 'generation 429', 'sandbox 400', 'sandbox 429']),
    );
  });

  test.each(cases)('$name states the limit of its bucket, as the server sends it', ({ bucket, status, headers }) => {
    const example = (name: string) => deref<JsonObject>(doc, headers[name]).example;
    // A refused request leaves none in its window; any other answer counted itself.
    const remaining = status === '429' ? 0 : MINUTE_LIMIT[bucket]! - 1;

    expect(example('RateLimit-Limit')).toBe(MINUTE_LIMIT[bucket]);
    expect(example('X-RateLimit-Limit')).toBe(MINUTE_LIMIT[bucket]);
    expect(example('RateLimit-Remaining')).toBe(remaining);
    expect(example('X-RateLimit-Remaining')).toBe(remaining);
  });
});

describe('examples', () => {
  const withBodies = listOperations(doc).filter((entry) => entry.operation.requestBody !== undefined);

  test.each(withBodies.map((entry) => ({ name: `${entry.method.toUpperCase()} ${entry.path}`, entry })))(
    '$name: each request example has a success example of the same name, so example-driven tools pair them',
    ({ entry }) => {
      const [, response] = Object.entries(entry.operation.responses ?? {}).find(([s]) => s.startsWith('2'))!;
      const requestNames = Object.keys(Object.values(contentOf(doc, entry.operation.requestBody))[0]!.examples ?? {});
      const responseNames = Object.keys(Object.values(contentOf(doc, deref<JsonObject>(doc, response)))[0]!.examples ?? {});

      expect(requestNames.length).toBeGreaterThan(0);
      expect(responseNames).toEqual(expect.arrayContaining(requestNames));
    },
  );
});

describe('a second, independent document validator', () => {
  // Redocly's lint is the first; this one checks the bundle against the OpenAPI 3.1
  // JSON Schema itself, written by other people.
  test('finds the bundle valid OpenAPI 3.1, and a copy without info.title not', async () => {
    type Spec = Parameters<Validator['validate']>[0];
    const valid = await new Validator().validate(structuredClone(doc) as unknown as Spec);
    const broken = structuredClone(doc) as unknown as { info: Record<string, unknown> };
    delete broken.info.title;
    const invalid = await new Validator().validate(broken as unknown as Spec);

    expect(valid).toEqual({ valid: true });
    expect(invalid.valid).toBe(false);
  });
});
