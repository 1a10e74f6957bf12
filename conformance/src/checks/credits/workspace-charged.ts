import { defineCheck, STATEFUL } from '../../check.ts';
import { describe } from '../../expect.ts';
import type { Exchange } from '../../http.ts';
import { changed, needShown, show } from '../../observe/ledger.ts';
import { fail, notApplicable, skip } from '../../outcome.ts';
import { isJson } from '../../world.ts';

/** Members of GET /v1/me the contract names for the account's kind (ND-ME); judged under the contract profile only. */
const ACCOUNT_TYPE = 'account_type';
const OWNER_ACCOUNT_ID = 'owner_account_id';

export default defineCheck({
  id: 'credits.workspace-charged',
  title: "A workspace's jobs are paid by the workspace, never by its owner account",
  asserts:
    "Given a workspace's key (--workspace-key) and its owner account's (--owner-key): the two keys report different accounts; an avatar made with the workspace's key lowers the workspace's available credits (or raises its used ones) by at least its price once ready, and leaves the owner's balance exactly as it was (each of available, reserved and used judged where shown). Under the contract, GET /v1/me names the workspace's key's account a workspace of that owner and the owner's an owner.",
  clauses: ['CR-ACCOUNT', 'AUTH-ACCOUNT'],
  decisions: ['ND-ME'],
  profiles: STATEFUL,
  // A source clause, judged wherever the run has a workspace's keys and /v1/me shows a
  // balance; not applicable without them (not every service has workspaces).
  notRequiredIn: ['core', 'contract', 'production'],
  // One avatar, charged to the workspace, and only when its keys are given.
  creates: (options) => (options.workspaceKey && options.ownerKey ? { avatar: 1 } : {}),
  // After the credit checks of the run's accounts; one avatar of the workspace's own.
  phase: 'clock',
  // Beside the main key's clock checks, not after them: it sends with neither the main key
  // nor a key whose clock the other lane moves.
  lane: 'requests',
  waits: (allow) => allow.job('avatar') + allow.options.pollMaxDelayMs / 1000,
  async run(ctx) {
    if (!ctx.options.workspaceKey || !ctx.options.ownerKey) notApplicable('needs --workspace-key and --owner-key (a key of a workspace and one of its owner account)');
    needShown(ctx.shape, ['available', 'reserved', 'used'], 'needs a credit balance to see who paid', { any: true });
    const me = (key: 'workspace' | 'owner', note: string) => ctx.http.send({ key, method: 'GET', path: '/v1/me', note });
    const balanceOf = (exchange: Exchange, flag: string) => ctx.shape.balance(exchange) ?? skip(`GET /v1/me of ${flag} did not show the credit balance where the implementation profile says (account.credits): ${describe(exchange)}`);

    const [workspaceBefore, ownerBefore] = [await me('workspace', 'workspace balance before'), await me('owner', 'owner balance before')];
    const workspaceId = ctx.shape.accountId(workspaceBefore.json);
    const ownerId = ctx.shape.accountId(ownerBefore.json);
    if (workspaceId !== undefined && workspaceId === ownerId) {
      fail({ clause: 'AUTH-ACCOUNT', message: 'the workspace key and the owner key report the same account', expected: 'the workspace its own account, apart from its owner', received: workspaceId, fix: "Give a workspace an account of its own, and answer a key's GET /v1/me with the account it belongs to.", exchanges: [workspaceBefore, ownerBefore] });
    }
    // The run's other accounts make jobs of their own meanwhile: an owner among them would move for them.
    const runKeys = (['main', 'second'] as const).filter((key) => ctx.hasKey(key));
    const runAccounts: string[] = [];
    for (const key of runKeys) {
      const id = ctx.shape.accountId((await ctx.http.send({ key, method: 'GET', path: '/v1/me', note: `the ${key} key's account` })).json);
      if (id !== undefined) runAccounts.push(id);
    }
    if (ownerId !== undefined && runAccounts.includes(ownerId)) notApplicable('--owner-key belongs to the account of --api-key or --second-key, whose own jobs move its balance; give an owner account the run makes no jobs with');
    if (workspaceId !== undefined && runAccounts.includes(workspaceId)) notApplicable('--workspace-key belongs to the account of --api-key or --second-key; give a workspace the run makes no jobs with');
    if (ctx.contract) {
      const [workspaceJson, ownerJson] = [workspaceBefore.json, ownerBefore.json];
      const kind = (json: unknown) => (isJson(json) ? { type: json[ACCOUNT_TYPE], owner: json[OWNER_ACCOUNT_ID] } : {});
      if (kind(workspaceJson).type !== 'workspace' || kind(workspaceJson).owner !== ownerId) {
        fail({ clause: 'CR-ACCOUNT', message: "GET /v1/me of the workspace key does not name it a workspace of the owner key's account", expected: `${ACCOUNT_TYPE} "workspace", ${OWNER_ACCOUNT_ID} "${ownerId}"`, received: JSON.stringify(kind(workspaceJson)), fix: 'Say in GET /v1/me which kind of account pays for the key, and for a workspace its owner (ND-ME).', exchanges: [workspaceBefore, ownerBefore] });
      }
      if (kind(ownerJson).type !== 'owner' || kind(ownerJson).owner !== null) {
        fail({ clause: 'CR-ACCOUNT', message: 'GET /v1/me of the owner key does not name its account an owner', expected: `${ACCOUNT_TYPE} "owner", ${OWNER_ACCOUNT_ID} null`, received: JSON.stringify(kind(ownerJson)), fix: 'Say in GET /v1/me which kind of account pays for the key (ND-ME).', exchanges: [ownerBefore] });
      }
    }
    const workspaceStart = balanceOf(workspaceBefore, '--workspace-key');
    const ownerStart = balanceOf(ownerBefore, '--owner-key');

    const body = ctx.shape.avatarBody({ type: 'prompt', name: 'Conformance workspace', prompt: 'A presenter paid for by a workspace, not by its owner.' });
    const create = await ctx.http.send({ key: 'workspace', method: 'POST', path: '/v1/avatars', json: body, note: 'avatar of the workspace' });
    if (!ctx.shape.isCreated('avatar', create.status)) skip(`the workspace key's avatar was not accepted (does the workspace have credits for one?): ${describe(create)}`);
    const id = ctx.shape.createdId('avatar', create.json);
    if (!id) skip(`the workspace key's avatar was accepted, but its answer names no ID to follow it by: ${describe(create)}`);
    const path = `/v1/avatars/${id}`;
    let delay = ctx.options.pollInitialDelayMs;
    let ended: 'ready' | 'failed' | undefined;
    let last: Exchange = create;
    while (ended === undefined) {
      await ctx.sleep(delay);
      delay = Math.min(ctx.options.pollMaxDelayMs, Math.round(delay * 1.5));
      last = await ctx.http.send({ key: 'workspace', method: 'GET', path, note: 'poll the workspace avatar' });
      if (last.status === 200) ended = ctx.shape.terminal(ctx.shape.state(last.json));
      else if (last.status !== 429 && last.status < 500) skip(`reading the workspace's avatar ${id} answered ${describe(last)}`);
    }
    const workspaceAfter = await me('workspace', 'workspace balance after');
    const ownerAfter = await me('owner', 'owner balance after');
    const workspaceEnd = balanceOf(workspaceAfter, '--workspace-key');
    const ownerEnd = balanceOf(ownerAfter, '--owner-key');
    const exchanges = [ownerBefore, create, last, ownerAfter];

    const moved = changed(ownerStart, ownerEnd);
    if (moved.length > 0) {
      fail({
        clause: 'CR-ACCOUNT',
        message: `the owner account's balance moved (${moved.join(', ')}) while only its workspace made a job`,
        expected: `the owner's balance as it was: ${show(ownerStart)}`,
        received: show(ownerEnd),
        fix: "Charge a job to the account its key belongs to: a workspace's own credits, never its owner's.",
        exchanges,
      });
    }
    const price = ctx.shape.price('avatar', last.json);
    if (ended === 'ready') {
      const paid = workspaceStart.available !== undefined && workspaceEnd.available !== undefined ? workspaceStart.available - workspaceEnd.available : workspaceStart.used !== undefined && workspaceEnd.used !== undefined ? workspaceEnd.used - workspaceStart.used : undefined;
      // At least its price: what else the workspace is charged for (a read, say) is other checks' business.
      if (paid !== undefined && paid < (price ?? 1)) {
        fail({
          clause: 'CR-ACCOUNT',
          message: `the workspace's avatar ${id} is ready, but the workspace's balance shows ${paid} credits paid`,
          expected: price === undefined ? 'a charge' : `at least ${price} credits charged to the workspace`,
          received: `before: ${show(workspaceStart)}; after: ${show(workspaceEnd)}`,
          fix: "Charge a job to the account its key belongs to: the workspace's own credits.",
          exchanges: [workspaceBefore, create, last, workspaceAfter],
        });
      }
    }
  },
});
