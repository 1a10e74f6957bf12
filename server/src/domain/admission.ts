// Admitting a request (AUTH-KEY, RL-*): who is calling, and whether its key has room in
// the operation's bucket. One use case from the key the client presented to the
// counted request, so the key goes to the store and back once.
import type { Caller, DomainDeps } from './deps.ts';
import { DomainError } from './errors.ts';
import { hashApiKey } from './keys.ts';
import type { LimitedBucket, RateDecision, WindowState } from './model.ts';
import { activeWindow, ceilSeconds } from './rateLimits.ts';
import { SANDBOX_LIMITS, accountNow } from './sandboxClock.ts';

export interface Admission {
  caller: Caller;
  /** Every window of the bucket, this request counted when it was admitted. */
  decision: RateDecision;
  /** The window whose figures the answer carries (RL-HEADERS). */
  shown: WindowState;
  /** Whole seconds until `shown` resets. */
  resetSeconds: number;
  /** Set when the bucket is full: the problem to answer, after the window's headers. */
  refusal: DomainError | null;
}

/**
 * Admits a request that presented `key` (null when it presented none) for an operation
 * of `bucket`. A missing, unknown or revoked key is refused with the same 401, which
 * never echoes the key. Null when the operation does not exist for this key (the sandbox
 * clock, for a live key): it is answered like an unknown route, and nothing is counted.
 */
export async function admit(deps: DomainDeps, key: string | null, bucket: LimitedBucket): Promise<Admission | null> {
  const found = key === null ? null : await deps.store.accounts.findKeyByHash(hashApiKey(key));
  if (!found) throw new DomainError('unauthorized', 'Send a valid API key as "Authorization: Bearer <key>".');
  const caller: Caller = { account: found.account, key: found.key };
  if (bucket === 'sandbox' && caller.key.mode !== 'sandbox') return null;

  // The plan's buckets live on the account's time; the sandbox clock's own bucket on the service's.
  const decision =
    bucket === 'sandbox'
      ? await deps.store.rateLimits.consume(caller.key.id, bucket, SANDBOX_LIMITS, deps.clock.now())
      : await deps.store.rateLimits.consume(caller.key.id, bucket, caller.account.plan[bucket], accountNow(deps, caller.account));
  const shown = activeWindow(decision);
  const resetSeconds = ceilSeconds(shown.resetMs);
  const refusal = decision.allowed
    ? null
    : new DomainError('rate_limit_exceeded', `This key used its ${shown.limit} ${bucket} requests of this ${shown.window}; retry in ${resetSeconds} seconds.`, [], {
        retry_after: resetSeconds,
      });
  return { caller, decision, shown, resetSeconds, refusal };
}
