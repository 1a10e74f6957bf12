// The operator commands for owner accounts and their workspaces, run as an operator runs
// them (`npm run admin`) beside a serving server on the same store: a workspace made under
// an owner, keys and credits for either, an owner listed with its workspaces.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminCommand } from './support/adminCommand.ts';
import { startTestService, type TestService } from './support/harness.ts';


let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(() => svc.dispose());

const { admin, json } = adminCommand(() => svc.storeEnv.env);

const me = async (key: string) => (await svc.request('GET', '/v1/me', { key })).body;

// Each command is a process of its own (about 0.7 s): what does not depend on another runs beside it.
describe('npm run admin with workspaces', () => {
  let owner: { account_id: string; api_key: string; signing_secret: string };
  let workspace: { account_id: string; api_key: string; signing_secret: string; owner_account_id: string };
  beforeAll(async () => {
    owner = await json('create-account', '--name', 'Acme', '--credits', '100');
    workspace = await json('create-workspace', '--owner', owner.account_id, '--name', 'Acme growth', '--credits', '50');
  });

  it("creates a workspace under an owner, issues it a key, sets and grants its credits, and lists the owner with it, the owner's credits left as they were", async () => {
    const [set, granted, second] = await Promise.all([
      json('set-credits', '--account', workspace.account_id, '--credits', '60'),
      json('grant-credits', '--account', workspace.account_id, '--credits', '5'),
      json('issue-key', '--account', workspace.account_id),
    ]);
    const [listed, lines, all] = await Promise.all([json('list-workspaces', '--owner', owner.account_id), admin('list-workspaces', '--owner', owner.account_id), json('list-accounts')]);

    expect(workspace).toMatchObject({ owner_account_id: owner.account_id, mode: 'sandbox' });
    expect(workspace.api_key).toMatch(/^sk_test_/);
    expect(workspace.signing_secret).not.toBe(owner.signing_secret);
    expect(set).toEqual({ account_id: workspace.account_id, monthly_credits: 60 });
    expect(granted.account_id).toBe(workspace.account_id);
    for (const key of [workspace.api_key, second.api_key]) {
      expect(await me(key)).toMatchObject({ account_id: workspace.account_id, account_type: 'workspace', owner_account_id: owner.account_id, credits: { quota: 65, available: 65 } });
    }
    expect(await me(owner.api_key)).toMatchObject({ account_id: owner.account_id, account_type: 'owner', owner_account_id: null, credits: { quota: 100 } });
    expect(listed.map((r: Record<string, unknown>) => [r.account_id, r.account_type, r.owner_account_id, r.name, r.available])).toEqual([
      [owner.account_id, 'owner', null, 'Acme', 100],
      [workspace.account_id, 'workspace', owner.account_id, 'Acme growth', 65],
    ]);
    expect(lines.stdout.trim().split('\n').map((line) => line.split('  ').slice(0, 3))).toEqual([
      [owner.account_id, 'owner', 'Acme'],
      [workspace.account_id, `workspace of ${owner.account_id}`, 'Acme growth'],
    ]);
    expect(all.find((r: Record<string, unknown>) => r.account_id === workspace.account_id)).toMatchObject({ account_type: 'workspace', owner_account_id: owner.account_id });
    expect(all.find((r: Record<string, unknown>) => r.account_id === owner.account_id)).toMatchObject({ account_type: 'owner', owner_account_id: null });
  });

  it('refuses a workspace under a workspace or under an unknown owner, naming the flag, exit 2', async () => {
    const [nested, unknown, missing] = await Promise.all([
      admin('create-workspace', '--owner', workspace.account_id),
      admin('create-workspace', '--owner', 'acct_nobody'),
      admin('create-workspace'),
    ]);

    expect(nested.code).toBe(2);
    expect(nested.stderr.split('\n')[0]).toBe(`admin: account ${workspace.account_id} is a workspace of ${owner.account_id}; --owner takes an owner account`);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr.split('\n')[0]).toBe('admin: no account acct_nobody');
    expect(missing.code).toBe(2);
    expect(missing.stderr.split('\n')[0]).toBe('admin: --owner is required');
    expect(await svc.store.accounts.listWorkspaces(workspace.account_id)).toEqual([]);
  });
});
