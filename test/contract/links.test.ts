// The document's OpenAPI links tell stateful tools (Schemathesis and the like) how one
// answer leads to the next request: a create to its read, an avatar to its videos, a page
// to the next. A link that names a missing operation or parameter, or points at a member
// its response does not have, would send those tools guessing again, so every link is
// checked against the document: its target exists, each parameter it fills is one the
// target takes, each body member one the target's request schema has, and each runtime
// expression points at something the source response (or request) holds.
import { describe, expect, test } from 'vitest';
import { contentOf, deref, isObject, listOperations, loadDocument, parametersOf, successOf, type Document, type JsonObject, type OperationEntry } from './support/openapi.ts';

const doc = loadDocument();
const operations = listOperations(doc);
const byId = new Map(operations.map((entry) => [entry.operation.operationId, entry]));

interface LinkSite {
  name: string;
  from: OperationEntry;
  status: string;
  response: JsonObject;
  link: JsonObject;
}

function linkSites(document: Document): LinkSite[] {
  return listOperations(document).flatMap((from) =>
    Object.entries(from.operation.responses ?? {}).flatMap(([status, raw]) => {
      const response = deref<JsonObject>(document, raw);
      return Object.entries((response.links ?? {}) as Record<string, unknown>).map(([name, link]) => ({
        name: `${from.operation.operationId} ${status} -> ${name}`,
        from,
        status,
        response,
        link: deref<JsonObject>(document, link),
      }));
    }),
  );
}

/** The types a schema allows, through $ref; undefined for any. */
function typesOf(schema: JsonObject): string[] | undefined {
  const s = deref<JsonObject>(doc, schema);
  if (s.type === undefined) return 'const' in s ? [typeof s.const] : undefined;
  return Array.isArray(s.type) ? (s.type as string[]) : [String(s.type)];
}

/**
 * The schemas a JSON pointer reaches in instances of `schema`: through $ref, the
 * variants of oneOf/anyOf/allOf, `properties` for a name and `items` for an index.
 */
function reach(schema: unknown, pointer: string): JsonObject[] {
  let at: JsonObject[] = [deref<JsonObject>(doc, schema)];
  for (const raw of pointer.split('/').slice(1)) {
    const token = raw.replaceAll('~1', '/').replaceAll('~0', '~');
    const expand = (s: JsonObject): JsonObject[] => [
      s,
      ...(['oneOf', 'anyOf', 'allOf'] as const).flatMap((k) => ((s[k] ?? []) as unknown[]).flatMap((v) => expand(deref<JsonObject>(doc, v)))),
    ];
    at = at
      .flatMap(expand)
      .flatMap((s) => (/^\d+$/.test(token) && isObject(s.items) ? [s.items] : isObject(s.properties) && isObject(s.properties[token]) ? [s.properties[token]] : []))
      .map((s) => deref<JsonObject>(doc, s));
  }
  return at;
}

/** What is wrong with a runtime expression of a link from `site`, or undefined if it points at something real. */
function expressionProblem(site: Pick<LinkSite, 'from' | 'response'>, expression: unknown): string | undefined {
  if (typeof expression !== 'string') return `${JSON.stringify(expression)} is not a runtime expression`;
  const body = /^\$response\.body#(\/.*)$/.exec(expression);
  if (body) {
    const schemas = Object.values(contentOf(doc, site.response)).map((m) => m.schema);
    return schemas.some((schema) => reach(schema, body[1]!).length > 0) ? undefined : `the response schema has no ${body[1]}`;
  }
  const header = /^\$response\.header\.(.+)$/.exec(expression);
  if (header) return Object.keys((site.response.headers ?? {}) as JsonObject).some((h) => h.toLowerCase() === header[1]!.toLowerCase()) ? undefined : `the response has no header ${header[1]}`;
  const request = /^\$request\.(path|query|header)\.(.+)$/.exec(expression);
  if (request) return parametersOf(doc, site.from).some((p) => p.in === request[1] && p.name === request[2]) ? undefined : `the request has no ${request[1]} parameter ${request[2]}`;
  return `${expression} is not an expression this test knows`;
}

/** Every problem of one link: its target, the parameters and body members it fills, and their expressions. */
function linkProblems(site: LinkSite): string[] {
  const problems: string[] = [];
  const target = byId.get(site.link.operationId as string);
  if (!target) return [`no operation ${String(site.link.operationId)}`];
  const targetParameters = parametersOf(doc, target);
  for (const [qualified, expression] of Object.entries((site.link.parameters ?? {}) as Record<string, unknown>)) {
    // A name may say where it goes ("path.id") when the target has two of that name.
    const [place, name] = qualified.includes('.') ? (qualified.split('.', 2) as [string, string]) : [undefined, qualified];
    const parameter = targetParameters.find((p) => p.name === name && (place === undefined || p.in === place));
    if (!parameter) problems.push(`${target.operation.operationId} takes no parameter ${qualified}`);
    const wrong = expressionProblem(site, expression);
    if (wrong) problems.push(`${qualified}: ${wrong}`);
    const body = typeof expression === 'string' ? /^\$response\.body#(\/.*)$/.exec(expression) : null;
    if (parameter && body && !wrong) {
      // The member must be able to hold what the parameter takes (a nullable cursor holds a string).
      const wanted = typesOf(parameter.schema as JsonObject) ?? [];
      const given = Object.values(contentOf(doc, site.response)).flatMap((m) => reach(m.schema, body[1]!)).flatMap((s) => typesOf(s) ?? wanted);
      if (!wanted.some((t) => given.includes(t) || (t === 'number' && given.includes('integer')))) problems.push(`${qualified}: ${body[1]} is ${given.join('|')}, the parameter takes ${wanted.join('|')}`);
    }
  }
  if (site.link.requestBody !== undefined) {
    const schema = Object.values(contentOf(doc, target.operation.requestBody)).map((m) => m.schema)[0];
    if (!schema) problems.push(`${target.operation.operationId} takes no body`);
    else if (isObject(site.link.requestBody)) {
      for (const [member, expression] of Object.entries(site.link.requestBody)) {
        if (reach(schema, `/${member}`).length === 0) problems.push(`${target.operation.operationId}'s body has no member ${member}`);
        const wrong = expressionProblem(site, expression);
        if (wrong) problems.push(`body ${member}: ${wrong}`);
      }
    } else {
      const wrong = expressionProblem(site, site.link.requestBody);
      if (wrong) problems.push(`body: ${wrong}`);
    }
  }
  return problems;
}

const sites = linkSites(doc);

describe('OpenAPI links of generated/openapi.json', () => {
  test.each([
    ['createAvatar', 'getAvatar'],
    ['createAvatar', 'createAvatarVideo'],
    ['getAvatar', 'createAvatarVideo'],
    ['createAvatarVideo', 'getAvatarVideo'],
    ['getAvatarVideo', 'getAvatar'],
    ['listAvatars', 'listAvatars'],
    ['listAvatarVideos', 'listAvatarVideos'],
    ['listWebhookEvents', 'listWebhookEvents'],
    ['getWebhookEvent', 'replayWebhookEvent'],
    ['replayWebhookEvent', 'getWebhookEvent'],
  ])('lead from a success of %s to %s', (from, to) => {
    const found = sites.filter((s) => s.from.operation.operationId === from && s.link.operationId === to);

    expect(found.map((s) => s.status)).toContain(String(successOf(doc, byId.get(from)!.operation).status));
  });

  test('a create leads to the new record by the id of its body, and a page to the next by its cursor', () => {
    const link = (from: string, to: string) => sites.find((s) => s.from.operation.operationId === from && s.link.operationId === to)!.link;

    expect(link('createAvatar', 'getAvatar').parameters).toEqual({ id: '$response.body#/id' });
    expect(link('createAvatar', 'createAvatarVideo').requestBody).toEqual({ avatar_id: '$response.body#/id' });
    expect(link('createAvatarVideo', 'getAvatarVideo').parameters).toEqual({ id: '$response.body#/id' });
    expect(link('listAvatars', 'listAvatars').parameters).toEqual({ cursor: '$response.body#/next_cursor' });
  });

  test.each(sites)('$name names an operation, parameters and members that exist', (site) => {
    expect(linkProblems(site)).toEqual([]);
  });

  test('the check finds a link to a missing operation, parameter or member', () => {
    const [site] = sites.filter((s) => s.from.operation.operationId === 'createAvatar' && s.link.operationId === 'getAvatar');
    const broken = (link: JsonObject) => linkProblems({ ...site!, link });

    expect(broken({ operationId: 'getAvatars', parameters: { id: '$response.body#/id' } })).toEqual(['no operation getAvatars']);
    expect(broken({ operationId: 'getAvatar', parameters: { avatar: '$response.body#/id' } })).toEqual(['getAvatar takes no parameter avatar']);
    expect(broken({ operationId: 'getAvatar', parameters: { id: '$response.body#/avatar_id' } })).toEqual(['id: the response schema has no /avatar_id']);
    expect(broken({ operationId: 'getAvatar', parameters: { id: '$response.body#/credits' } })).toEqual(['id: /credits is integer, the parameter takes string']);
    expect(broken({ operationId: 'getAvatar', parameters: { id: '$request.query.id' } })).toEqual(['id: the request has no query parameter id']);
    expect(broken({ operationId: 'createAvatarVideo', requestBody: { avatar: '$response.body#/id' } })).toEqual(["createAvatarVideo's body has no member avatar"]);
  });
});
