// Owner accounts and their workspaces (source 1.5, 5.2; CR-ACCOUNT, AUTH-ACCOUNT): a key
// belongs to a workspace or to an owner account, and that account alone pays for its jobs,
// never the workspace's owner nor a sibling workspace, however the creates interleave;
// GET /v1/me says which account pays; each key keeps its own rate limits.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyWebhook } from '../../../client/src/verify.ts';
import { createWorkspace } from '../../src/domain/accounts.ts';
import { DomainError } from '../../src/domain/errors.ts';
import type { RatePlan } from '../../src/domain/model.ts';
import { GENEROUS_PLAN, promptAvatar, startTestService, type TestService } from '../support/harness.ts';
import { startReceiver } from '../support/receiver.ts';

let svc: TestService;

beforeAll(async () => {
  svc = await startTestService();
});
afterAll(() => svc.dispose());

const me = async (key: string) => (await svc.request('GET', '/v1/me', { key })).body;

describe('GET /v1/me', () => {
  it('names an owner account as the owner, with no owner of its own', async () => {
    const owner = await svc.account({ name: 'Acme' });

    expect(await me(owner.api_key)).toMatchObject({ account_id: owner.account_id, account_type: 'owner', owner_account_id: null, name: 'Acme' });
  });

  it("names a workspace's key's workspace as the account that pays, and its owner", async () => {
    const owner = await svc.account({ name: 'Acme' });
    const workspace = await svc.workspace(owner.account_id, { name: 'Acme growth team', credits: 70 });

    const body = await me(workspace.api_key);

    expect(body).toMatchObject({ account_id: workspace.account_id, account_type: 'workspace', owner_account_id: owner.account_id, name: 'Acme growth team' });
    expect(body.credits).toMatchObject({ quota: 70, available: 70 });
    expect(workspace.account_id).not.toBe(owner.account_id);
  });
});

describe('the account a job is charged to (CR-ACCOUNT)', () => {
  it('is the workspace for its keys and the owner for the owner\'s, never another, under parallel creates', async () => {
    // Each avatar costs 10: the owner can pay for 4, workspace A for 5, workspace B for 3.
    // Every account is asked for more than it can pay, all at once and interleaved, so a
    // charge to the wrong account shows as a wrong count of 202s or a wrong balance.
    const owner = await svc.account({ credits: 40, plan: GENEROUS_PLAN });
    const a = await svc.workspace(owner.account_id, { credits: 50, plan: GENEROUS_PLAN });
    const b = await svc.workspace(owner.account_id, { credits: 30, plan: GENEROUS_PLAN });
    const asks = [...Array(7).fill(owner.api_key), ...Array(8).fill(a.api_key), ...Array(6).fill(b.api_key)] as string[];
    const interleaved = asks.map((key, i) => ({ key, order: (i * 7) % asks.length })).sort((x, y) => x.order - y.order);

    const answers = await Promise.all(interleaved.map(async ({ key }) => ({ key, reply: await svc.request('POST', '/v1/avatars', { key, json: promptAvatar() }) })));
    const accepted = (key: string) => answers.filter((x) => x.key === key && x.reply.status === 202);
    const refused = (key: string) => answers.filter((x) => x.key === key && x.reply.status === 402);
    for (const { key, reply } of answers.filter((x) => x.reply.status === 202)) await svc.waitTerminal(`/v1/avatars/${reply.body.id}`, key);

    expect([owner, a, b].map((x) => [accepted(x.api_key).length, refused(x.api_key).length])).toEqual([[4, 3], [5, 3], [3, 3]]);
    expect((await me(owner.api_key)).credits).toMatchObject({ quota: 40, used: 40, reserved: 0, available: 0 });
    expect((await me(a.api_key)).credits).toMatchObject({ quota: 50, used: 50, reserved: 0, available: 0 });
    expect((await me(b.api_key)).credits).toMatchObject({ quota: 30, used: 30, reserved: 0, available: 0 });
  });

  it('leaves the owner and a sibling untouched when a workspace runs out, and refuses the workspace with 402', async () => {
    const owner = await svc.account({ credits: 100, plan: GENEROUS_PLAN });
    const spender = await svc.workspace(owner.account_id, { credits: 10, plan: GENEROUS_PLAN });
    const sibling = await svc.workspace(owner.account_id, { credits: 100, plan: GENEROUS_PLAN });

    const first = await svc.request('POST', '/v1/avatars', { key: spender.api_key, json: promptAvatar() });
    const second = await svc.request('POST', '/v1/avatars', { key: spender.api_key, json: promptAvatar() });
    await svc.waitTerminal(`/v1/avatars/${first.body.id}`, spender.api_key);

    expect([first.status, second.status]).toEqual([202, 402]);
    expect(second.body.code).toBe('insufficient_credits');
    expect((await me(owner.api_key)).credits).toMatchObject({ used: 0, reserved: 0, available: 100 });
    expect((await me(sibling.api_key)).credits).toMatchObject({ used: 0, reserved: 0, available: 100 });
  });

  it("keeps a workspace's jobs its own: neither its owner nor a sibling can read them (AUTH-ACCOUNT)", async () => {
    const owner = await svc.account({ plan: GENEROUS_PLAN });
    const workspace = await svc.workspace(owner.account_id, { plan: GENEROUS_PLAN });
    const sibling = await svc.workspace(owner.account_id, { plan: GENEROUS_PLAN });
    const created = await svc.request('POST', '/v1/avatars', { key: workspace.api_key, json: promptAvatar() });

    const byOwner = await svc.request('GET', `/v1/avatars/${created.body.id}`, { key: owner.api_key });
    const bySibling = await svc.request('GET', `/v1/avatars/${created.body.id}`, { key: sibling.api_key });

    expect([created.status, byOwner.status, bySibling.status]).toEqual([202, 404, 404]);
  });
});

describe("a workspace's webhooks", () => {
  it('are signed with the workspace\'s own signing secret, not its owner\'s (AUTH-SIGNING-SECRET)', async () => {
    const receiver = await startReceiver();
    try {
      const owner = await svc.account({ plan: GENEROUS_PLAN });
      const workspace = await svc.workspace(owner.account_id, { plan: GENEROUS_PLAN });
      await svc.request('POST', '/v1/avatars', { key: workspace.api_key, json: promptAvatar({ webhook_url: `${receiver.url}/workspace` }) });

      const [delivery] = await receiver.waitFor(1);
      const verify = (secret: string) => () => verifyWebhook({ rawBody: delivery!.rawBody, headers: delivery!.headers as Record<string, string>, secret });

      expect(workspace.signing_secret).not.toBe(owner.signing_secret);
      expect(verify(workspace.signing_secret)()).toMatchObject({ type: 'avatar.ready' });
      expect(verify(owner.signing_secret)).toThrow(/does not match the body: wrong secret/);
    } finally {
      await receiver.close();
    }
  });
});

describe('rate limits', () => {
  it("stay per key: a workspace's key spending its generation window leaves its owner's key's untouched", async () => {
    const plan: RatePlan = { read: GENEROUS_PLAN.read, generation: { minute: 2, day: 100 } };
    const owner = await svc.account({ plan });
    const workspace = await svc.workspace(owner.account_id, { plan });

    const spent = [];
    for (let i = 0; i < 3; i++) spent.push((await svc.request('POST', '/v1/avatars', { key: workspace.api_key, json: promptAvatar() })).status);
    const ownerWindow = (await me(owner.api_key)).rate_limits.generation.minute;

    expect(spent).toEqual([202, 202, 429]);
    expect(ownerWindow).toMatchObject({ limit: 2, remaining: 2 });
  });
});

describe('creating a workspace', () => {
  it('is refused under an owner that does not exist, and under a workspace, creating nothing', async () => {
    const owner = await svc.account();
    const workspace = await svc.workspace(owner.account_id);
    const before = await svc.store.accounts.countAccounts();

    const unknown = await createWorkspace(svc.store, svc.domain.clock, 'acct_nobody').catch((e: unknown) => e);
    const nested = await createWorkspace(svc.store, svc.domain.clock, workspace.account_id).catch((e: unknown) => e);

    expect(unknown).toBeInstanceOf(DomainError);
    expect((unknown as DomainError).message).toBe('no owner account acct_nobody');
    expect(nested).toBeInstanceOf(DomainError);
    expect((nested as DomainError).code).toBe('validation_failed');
    expect((nested as DomainError).fields).toEqual([expect.objectContaining({ field: 'owner', rule: 'owner_account' })]);
    expect(await svc.store.accounts.countAccounts()).toBe(before);
    expect((await svc.store.accounts.listWorkspaces(owner.account_id)).map((w) => w.id)).toEqual([workspace.account_id]);
  });
});
