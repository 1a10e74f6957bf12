// The contract's request examples are what client authors copy first, so none may go
// stale: each one, built into a request with the examples of the operation's parameters,
// is accepted by this project's server on today's date and with the server's clock ten
// years ahead. An example that holds a date (a sandbox clock `to`, say) would be refused
// on one of the two once that date has passed; one that names a record (an ID) gets the
// 404 of a record this account does not have, never a refusal of its form. That every
// example also validates against its schema is document.test.ts's.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Clock } from '../../server/src/domain/clock.ts';
import { GENEROUS_PLAN, promptAvatar, startTestService, type Reply, type TestService } from '../../server/test/support/harness.ts';
import { examplePath, examplesOf, listOperations, loadDocument, onlyMediaType, parametersOf, successOf, type OperationEntry } from './support/openapi.ts';
import { schemaValidator } from './support/schemas.ts';

const doc = loadDocument();
const schemas = schemaValidator(doc);
const DAY_MS = 86_400_000;
const YEARS_AHEAD = 10;

/** Statuses that refuse a request for its form rather than for what it names. */
const REFUSALS_OF_FORM = [400, 413, 415, 422];

interface Row {
  name: string;
  entry: OperationEntry;
  status: number;
  body: unknown;
  /** The request names a record by an example ID, which this account does not have. */
  namesRecord: boolean;
}

// One row per operation and request example ("no body" for those without a body),
// with every parameter the operation documents set to its example.
const rows: Row[] = listOperations(doc).flatMap((entry) => {
  const { status } = successOf(doc, entry.operation);
  const bodies: [string, unknown][] = entry.operation.requestBody === undefined ? [['no body', undefined]] : examplesOf(doc, onlyMediaType(doc, entry.operation.requestBody).mediaType);
  const namesRecord = parametersOf(doc, entry).some((p) => p.in === 'path') || entry.operation.operationId === 'createAvatarVideo';
  return bodies.map(([example, body]) => ({ name: `${entry.method.toUpperCase()} ${entry.path} (${example})`, entry, status, body, namesRecord }));
});

/** The request the row's examples make. */
function requestOf(entry: OperationEntry): { path: string; headers: Record<string, string> } {
  const parameters = parametersOf(doc, entry);
  const query = new URLSearchParams(parameters.filter((p) => p.in === 'query').map((p) => [String(p.name), String(p.example)] as [string, string]));
  const headers = Object.fromEntries(parameters.filter((p) => p.in === 'header').map((p) => [String(p.name), String(p.example)]));
  return { path: `${examplePath(doc, entry)}${query.size > 0 ? `?${query}` : ''}`, headers };
}

/** A clock that runs from `start` at the pace of real time, so jobs move on as they do in service. */
function clockFrom(start: number): Clock {
  const began = Date.now();
  return { now: () => start + (Date.now() - began) };
}

const dates = [
  { when: 'today', start: Date.now() },
  { when: `${YEARS_AHEAD} years ahead`, start: Date.now() + Math.round(YEARS_AHEAD * 365.25) * DAY_MS },
];

describe.each(dates)("the contract's request examples, with the server's clock $when", ({ start }) => {
  let svc: TestService;

  beforeAll(async () => {
    // The examples' webhook URLs name hosts outside; nothing may be looked up or sent there.
    svc = await startTestService({
      clock: clockFrom(start),
      resolve: async (host) => {
        throw new Error(`no DNS in tests (${host})`);
      },
    });
  });
  afterAll(() => svc?.dispose());

  const send = async (row: Row, body = row.body): Promise<Reply> => {
    // An account of its own per request: the examples share one Idempotency-Key.
    const { api_key: key } = await svc.account({ plan: GENEROUS_PLAN });
    const { path, headers } = requestOf(row.entry);
    return svc.request(row.entry.method.toUpperCase(), path, { key, headers, ...(body === undefined ? {} : { json: body }) });
  };

  test('cover every operation and request example of the document', () => {
    expect(new Set(rows.map((r) => r.entry.operation.operationId)).size).toBe(listOperations(doc).length);
    expect(rows.filter((r) => r.body !== undefined).length).toBeGreaterThanOrEqual(7);
  });

  test.each(rows)('$name is valid against its schema and accepted by the server', async (row) => {
    if (row.body !== undefined) {
      const { mediaType } = onlyMediaType(doc, row.entry.operation.requestBody);
      expect(schemas.validate(mediaType.schema ?? {}, row.body)).toEqual([]);
    }

    const answer = await send(row);

    expect(REFUSALS_OF_FORM, JSON.stringify(answer.body)).not.toContain(answer.status);
    if (row.namesRecord) expect(answer.body).toMatchObject({ status: 404, code: 'not_found' });
    else expect(answer.status, JSON.stringify(answer.body)).toBe(row.status);
  });

  test.each(rows.filter((r) => r.entry.operation.operationId === 'createAvatarVideo'))('$name is accepted with a ready avatar of the account in place of the example ID', async (row) => {
    const { api_key: key } = await svc.account({ plan: GENEROUS_PLAN });
    const avatar = await svc.request('POST', '/v1/avatars', { key, json: promptAvatar() });
    const ready = await svc.waitTerminal(`/v1/avatars/${avatar.body.id}`, key);
    const { path, headers } = requestOf(row.entry);

    const answer = await svc.request('POST', path, { key, headers, json: { ...(row.body as object), avatar_id: ready.id } });

    expect(ready.status).toBe('ready');
    expect(answer.status, JSON.stringify(answer.body)).toBe(row.status);
  });

});
