// Lists of avatars and videos (ND-LISTS), on the store the suite runs on: newest first,
// cursor pages that show each record exactly once even while records are created, the
// filters, another account's records never shown, and bad parameters named.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Job } from '../../src/domain/model.ts';
import { openBulkLoader } from '../../src/runtime.ts';
import { GENEROUS_PLAN, promptAvatar, startTestService, type TestService } from '../support/harness.ts';

let svc: TestService;

beforeAll(async () => {
  svc = await startTestService();
});
afterAll(() => svc.dispose());

const list = (key: string, path: string) => svc.request('GET', path, { key });

async function pages(key: string, path: string, between?: () => Promise<void>): Promise<{ ids: string[]; pages: number }> {
  const ids: string[] = [];
  let cursor: string | null = null;
  let count = 0;
  do {
    const page = await list(key, `${path}${path.includes('?') ? '&' : '?'}limit=100${cursor ? `&cursor=${cursor}` : ''}`);
    expect(page.status, JSON.stringify(page.body)).toBe(200);
    ids.push(...page.body.data.map((record: { id: string }) => record.id));
    cursor = page.body.has_more ? page.body.next_cursor : null;
    if (!page.body.has_more) expect(page.body.next_cursor).toBeNull();
    count++;
    await between?.();
  } while (cursor);
  return { ids, pages: count };
}

describe('GET /v1/avatars and /v1/avatar-videos', () => {
  it('when an account has avatars, then they come newest first, its own only, with the read bucket headers', async () => {
    const { api_key: key } = await svc.account({ credits: 100, plan: GENEROUS_PLAN });
    const { api_key: other } = await svc.account({ credits: 100, plan: GENEROUS_PLAN });
    const made: string[] = [];
    for (const name of ['first', 'second', 'third']) made.push((await svc.request('POST', '/v1/avatars', { key, json: promptAvatar({ name }) })).body.id);
    await svc.request('POST', '/v1/avatars', { key: other, json: promptAvatar() });

    const page = await list(key, '/v1/avatars');

    expect(page.status).toBe(200);
    expect(page.body).toMatchObject({ object: 'list', has_more: false, next_cursor: null });
    expect(page.body.data.map((a: { id: string }) => a.id)).toEqual([...made].reverse());
    expect(page.headers.get('ratelimit-limit')).toBe(String(GENEROUS_PLAN.read.minute));
  });

  it('when filtered by status, and videos by avatar, then only those come', async () => {
    const { api_key: key } = await svc.account({ credits: 200, plan: GENEROUS_PLAN });
    const ready = (await svc.waitTerminal(`/v1/avatars/${(await svc.request('POST', '/v1/avatars', { key, json: promptAvatar() })).body.id}`, key)).id;
    const failed = (await svc.waitTerminal(`/v1/avatars/${(await svc.request('POST', '/v1/avatars', { key, json: promptAvatar({ name: 'x [sandbox:fail]' }) })).body.id}`, key)).id;
    const other = (await svc.waitTerminal(`/v1/avatars/${(await svc.request('POST', '/v1/avatars', { key, json: promptAvatar() })).body.id}`, key)).id;
    const video = (await svc.request('POST', '/v1/avatar-videos', { key, json: { avatar_id: ready, script: 'Hi.' } })).body.id;
    await svc.request('POST', '/v1/avatar-videos', { key, json: { avatar_id: other, script: 'Hi.' } });

    const failedOnly = await list(key, '/v1/avatars?status=failed');
    const ofReady = await list(key, `/v1/avatar-videos?avatar_id=${ready}`);

    expect(failedOnly.body.data.map((a: { id: string }) => a.id)).toEqual([failed]);
    expect(ofReady.body.data.map((v: { id: string }) => v.id)).toEqual([video]);
  });

  it('when a parameter breaks its rule, then 422 names it', async () => {
    const { api_key: key } = await svc.account({ credits: 100, plan: GENEROUS_PLAN });

    for (const [query, field, rule] of [
      ['limit=0', 'limit', 'minimum'],
      ['limit=101', 'limit', 'maximum'],
      ['limit=ten', 'limit', 'type'],
      ['status=done', 'status', 'enum'],
      ['cursor=not-one-of-ours', 'cursor', 'format'],
      ['limit=5&limit=6', 'limit', 'single'],
    ]) {
      const refused = await list(key, `/v1/avatars?${query}`);
      expect(refused.status, query).toBe(422);
      expect(refused.body.errors, query).toEqual([expect.objectContaining({ field, rule })]);
    }
  });

  it('when 10,000 avatars are paged through while new ones are created, then each of the 10,000 comes exactly once', async () => {
    const { api_key: key, account_id: accountId, key_id: keyId } = await svc.account({ credits: 1000, plan: GENEROUS_PLAN });
    // Made in one go by the store: they share one creation time, so the order rests on the ID.
    const at = svc.domain.clock.now() - 60_000;
    const template: Job = {
      id: '', kind: 'avatar', accountId, keyId, sandbox: true, status: 'ready', input: { type: 'prompt', name: 'Bulk', prompt: 'p' },
      webhookUrl: null, credits: 10, period: new Date(at).toISOString().slice(0, 7), error: null, result: null,
      createdAt: at, updatedAt: at, completedAt: at, attempts: 1,
    };
    const bulk = openBulkLoader(svc.config);
    try {
      await bulk.insertReadyAvatars(template, 10_000);
    } finally {
      await bulk.close();
    }
    const createdMeanwhile: string[] = [];

    const { ids, pages: count } = await pages(key, '/v1/avatars', async () => {
      createdMeanwhile.push((await svc.request('POST', '/v1/avatars', { key, json: promptAvatar() })).body.id);
    });

    // The first page saw none of the avatars made later; every old one came once.
    const old = ids.filter((id) => !createdMeanwhile.includes(id));
    expect(old).toHaveLength(10_000);
    expect(new Set(ids).size).toBe(ids.length);
    expect(count).toBe(100);
  }, 120_000);
});
