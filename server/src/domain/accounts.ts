// Operator use cases: accounts, keys, credits and plans (the admin command and the
// first start call these; the public API never does).
import { DomainError } from './errors.ts';
import type { Store } from './ports.ts';
import type { Clock } from './clock.ts';
import { DEFAULT_MONTHLY_CREDITS, MAX_CREDITS, isCreditAmount } from './credits.ts';
import { newAccountId, newKeyId } from './ids.ts';
import { KEY_DISPLAY_LENGTH, generateApiKey, generateSigningSecret, hashApiKey } from './keys.ts';
import type { KeyMode, RatePlan } from './model.ts';
import { DEFAULT_PLAN } from './rateLimits.ts';
import { nameProblem } from './text.ts';

export interface IssuedKey {
  key_id: string;
  api_key: string;
  mode: KeyMode;
}

export interface CreatedAccount extends IssuedKey {
  account_id: string;
  signing_secret: string;
}

export async function issueKey(store: Store, clock: Clock, accountId: string, mode: KeyMode): Promise<IssuedKey> {
  const apiKey = generateApiKey(mode);
  const id = newKeyId();
  const created = await store.accounts.createKey({ id, accountId, mode, prefix: apiKey.slice(0, KEY_DISPLAY_LENGTH), hash: hashApiKey(apiKey), createdAt: clock.now() });
  // A live key would live in the account's moved time: its limits and credits would be the sandbox's.
  if (!created) throw new DomainError('sandbox_clock_unavailable', `account ${accountId} has moved its sandbox clock; it cannot have a live key`);
  return { key_id: id, api_key: apiKey, mode };
}

export interface CreatedWorkspace extends CreatedAccount {
  owner_account_id: string;
}

interface NewAccountOptions {
  name?: string;
  monthlyCredits?: number;
  mode?: KeyMode;
  plan?: RatePlan;
}

/** A new owner account (one that may hold workspaces) with one key. The key and the signing secret are shown once, here. */
export async function createAccount(store: Store, clock: Clock, options: NewAccountOptions = {}): Promise<CreatedAccount> {
  return create(store, clock, null, options);
}

/**
 * A new workspace of an owner account, with one key: an account of its own (credits, limits,
 * signing secret, keys) that pays for its own jobs; the owner is never charged for them
 * (source 1.5, 5.2). Refused for an unknown owner or one that is itself a workspace.
 */
export async function createWorkspace(store: Store, clock: Clock, ownerId: string, options: NewAccountOptions = {}): Promise<CreatedWorkspace> {
  const created = await create(store, clock, ownerId, options);
  return { ...created, owner_account_id: ownerId };
}

async function create(store: Store, clock: Clock, ownerId: string | null, options: NewAccountOptions): Promise<CreatedAccount> {
  // The operator command says the same of its flags, before it opens the store; this is for every other caller.
  const name = options.name ?? 'Workspace';
  const monthlyCredits = options.monthlyCredits ?? DEFAULT_MONTHLY_CREDITS;
  const problem = nameProblem(name);
  if (problem) throw new DomainError('validation_failed', `an account's name ${problem}`, [{ field: 'name', rule: 'name', message: problem }]);
  if (!isCreditAmount(monthlyCredits)) {
    const message = `must be a whole number from 0 to ${MAX_CREDITS}`;
    throw new DomainError('validation_failed', `an account's monthly credits ${message}`, [{ field: 'monthly_credits', rule: 'credits', message }]);
  }
  const id = newAccountId();
  const signingSecret = generateSigningSecret();
  const outcome = await store.accounts.createAccount({
    id,
    name,
    monthlyCredits,
    plan: options.plan ?? DEFAULT_PLAN,
    signingSecret,
    createdAt: clock.now(),
    ownerId,
  });
  if (!outcome.ok) {
    throw outcome.reason === 'owner_not_found'
      ? new DomainError('not_found', `no owner account ${ownerId}`)
      : new DomainError('validation_failed', `account ${ownerId} is a workspace; a workspace belongs to an owner account and holds no workspaces`, [
          { field: 'owner', rule: 'owner_account', message: 'must be an owner account: workspaces hold no workspaces' },
        ]);
  }
  const key = await issueKey(store, clock, id, options.mode ?? 'sandbox');
  return { account_id: id, signing_secret: signingSecret, ...key };
}
