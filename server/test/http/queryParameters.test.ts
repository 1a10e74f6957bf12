// Unknown query parameters (ND-QUERY): a parameter the operation does not take is
// refused with 422 naming it, as an unknown body member is, on every /v1 operation; the
// parameters each operation takes are read from the contract, never listed here.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queryParameters } from '../../../contract/operations.ts';
import { loadBundle } from '../../../contract/schemas.ts';
import { GENEROUS_PLAN, promptAvatar, startTestService, type TestService } from '../support/harness.ts';

let svc: TestService;

beforeAll(async () => {
  svc = await startTestService();
});
afterAll(() => svc.dispose());

const taken = queryParameters();
const METHODS = ['get', 'post'];
// Every operation of the contract, with its path's parameters filled in (a record that
// does not exist: the query is refused before the record is looked up).
const operations = Object.entries(loadBundle().paths as Record<string, Record<string, { operationId?: string }>>).flatMap(([path, item]) =>
  METHODS.filter((m) => item[m]?.operationId).map((method) => ({ operationId: item[method]!.operationId!, method: method.toUpperCase(), path: path.replace(/\{[^}]+\}/g, 'av_nothing') })),
);

describe('a query parameter the operation does not take', () => {
  it.each(operations)('when $method $path is sent with one, then 422 names it with the rule not_allowed and what the operation takes', async ({ operationId, method, path }) => {
    const { api_key: key } = await svc.account({ plan: GENEROUS_PLAN });
    const known = taken.get(operationId)!;

    const r = await svc.request(method, `${path}?zzz=1`, { key });

    expect(r.status).toBe(422);
    expect(r.body).toMatchObject({ code: 'validation_failed', detail: 'The query breaks 1 rule; see errors.' });
    expect(r.body.errors).toEqual([
      { field: 'zzz', rule: 'not_allowed', message: `is not a query parameter of this operation, which takes ${known.length > 0 ? `only: ${known.join(', ')}` : 'none'}` },
    ]);
    expect(r.headers.get('ratelimit-limit')).not.toBeNull();
  });

  it('when a list is asked with a misspelt limit, then 422 names the misspelling instead of answering the default page', async () => {
    const { api_key: key } = await svc.account({ plan: GENEROUS_PLAN });

    const misspelt = await svc.request('GET', '/v1/avatars?limt=5&status=ready', { key });
    const spelt = await svc.request('GET', '/v1/avatars?limit=5&status=ready', { key });

    expect(misspelt.status).toBe(422);
    expect(misspelt.body.errors).toEqual([expect.objectContaining({ field: 'limt', rule: 'not_allowed', message: expect.stringContaining('limit, cursor, status') })]);
    expect(spelt.status).toBe(200);
  });

  it('when the query itself begins with "?", then the name is read as the URL standard reads it, "?limit", and refused', async () => {
    const { api_key: key } = await svc.account({ plan: GENEROUS_PLAN });

    const list = await svc.request('GET', '/v1/avatars??limit=5', { key });
    const read = await svc.request('GET', '/v1/avatars/av_nothing??', { key });

    expect(list.status).toBe(422);
    expect(list.body.errors).toEqual([expect.objectContaining({ field: '?limit', rule: 'not_allowed' })]);
    expect(read.status).toBe(422);
    expect(read.body.errors).toEqual([expect.objectContaining({ field: '?', rule: 'not_allowed' })]);
  });

  it('when several are sent, then each is named once, and a name too long to repeat is cut', async () => {
    const { api_key: key } = await svc.account({ plan: GENEROUS_PLAN });
    const long = 'q'.repeat(300);

    const r = await svc.request('GET', `/v1/me?a=1&b=2&a=3&${long}=4`, { key });

    expect(r.status).toBe(422);
    expect(r.body.detail).toBe('The query breaks 3 rules; see errors.');
    expect(r.body.errors.map((e: { field: string }) => e.field)).toEqual(['a', 'b', `${'q'.repeat(64)}…`]);
  });

  it('when a create carries one, then nothing is created or reserved, whatever the body', async () => {
    const { api_key: key } = await svc.account({ plan: GENEROUS_PLAN });

    const r = await svc.request('POST', '/v1/avatars?dry_run=true', { key, json: promptAvatar() });
    const me = await svc.request('GET', '/v1/me', { key });
    const list = await svc.request('GET', '/v1/avatars', { key });

    expect(r.status).toBe(422);
    expect(r.body.errors).toEqual([expect.objectContaining({ field: 'dry_run', rule: 'not_allowed' })]);
    expect(me.body.credits.reserved).toBe(0);
    expect(list.body.data).toEqual([]);
  });

  it('when the request has no key, then 401 comes first; when the record exists, then 422 still comes before the answer', async () => {
    const { api_key: key } = await svc.account({ plan: GENEROUS_PLAN });
    const created = await svc.request('POST', '/v1/avatars', { key, json: promptAvatar() });

    const anonymous = await svc.request('GET', `/v1/avatars/${created.body.id}?expand=all`);
    const refused = await svc.request('GET', `/v1/avatars/${created.body.id}?expand=all`, { key });
    const read = await svc.request('GET', `/v1/avatars/${created.body.id}`, { key });

    expect(anonymous.status).toBe(401);
    expect(refused.status).toBe(422);
    expect(refused.body.errors).toEqual([expect.objectContaining({ field: 'expand', rule: 'not_allowed', message: expect.stringContaining('which takes none') })]);
    expect(read.status).toBe(200);
  });
});
