// GET /v1/me (ND-ME): the caller's account, key, credits and rate-limit windows.
import type { components } from '../../../generated/openapi.ts';
import { periodBounds, periodOf } from './credits.ts';
import type { Admission } from './admission.ts';
import type { DomainDeps } from './deps.ts';
import type { RateDecision } from './model.ts';
import { ceilSeconds } from './rateLimits.ts';
import { accountNow } from './sandboxClock.ts';

type AccountResource = components['schemas']['Account'];
type BucketResource = components['schemas']['RateLimitBucket'];

function bucketResource(decision: RateDecision): BucketResource {
  const find = (name: 'minute' | 'day') => {
    const w = decision.windows.find((x) => x.window === name)!;
    return { limit: w.limit, remaining: w.remaining, reset: ceilSeconds(w.resetMs) };
  };
  return { minute: find('minute'), day: find('day') };
}

/**
 * The account of an admitted GET /v1/me. Its read windows are the admission's, this
 * request counted; the generation windows are read without counting anything.
 */
export async function getMe(deps: DomainDeps, { caller, decision: read }: Admission): Promise<AccountResource> {
  const now = accountNow(deps, caller.account);
  const period = periodOf(now);
  const { start, end } = periodBounds(period);
  const [balance, generation] = await Promise.all([
    deps.store.jobs.creditBalance(caller.account.id, period),
    deps.store.rateLimits.peek({ keyId: caller.key.id, accountId: caller.account.id }, 'generation', caller.account.plan.generation, now),
  ]);
  if (balance.held !== undefined) deps.onCreditsOutOfRange?.(caller.account.id, balance);
  return {
    object: 'account',
    account_id: caller.account.id,
    // The account shown is the one that pays for the key's jobs; a workspace's owner is named, never charged.
    account_type: caller.account.ownerId === null ? 'owner' : 'workspace',
    owner_account_id: caller.account.ownerId,
    name: caller.account.name,
    key: { id: caller.key.id, mode: caller.key.mode, prefix: caller.key.prefix },
    credits: {
      period_start: new Date(start).toISOString(),
      period_end: new Date(end).toISOString(),
      quota: balance.quota,
      used: balance.used,
      reserved: balance.reserved,
      available: balance.available,
    },
    rate_limits: { read: bucketResource(read), generation: bucketResource(generation) },
    standard_webhooks: caller.account.standardWebhooks,
  };
}
