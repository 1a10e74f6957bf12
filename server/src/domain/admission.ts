// Admitting a request (AUTH-KEY, RL-*): who is calling, and whether its key has room in
// the operation's bucket. One use case from the key the client presented to the
// counted request: a key this process has seen goes to the store only to be counted.
import type { Caller, DomainDeps } from './deps.ts';
import { DomainError } from './errors.ts';
import { hashApiKey } from './keys.ts';
import type { LimitedBucket, RateDecision, WindowState } from './model.ts';
import type { KeyRecord } from './ports.ts';
import { activeWindow, ceilSeconds } from './rateLimits.ts';
import { SANDBOX_LIMITS, accountNow } from './sandboxClock.ts';

/** RFC 9110 §11.1: the scheme name is case-insensitive ("bearer", "BEARER"). */
const BEARER = /^Bearer +([A-Za-z0-9_\-]{8,200})\s*$/i;

/** The key a request's Authorization presents (AUTH-KEY, ND-AUTH-PRESENTATION), or null. */
export const presentedKey = (authorization: string): string | null => BEARER.exec(authorization)?.[1] ?? null;

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
export async function admit(
  deps: DomainDeps,
  key: string | null,
  bucket: LimitedBucket,
  /**
   * Started once the caller's account is known, alongside the count rather than after it,
   * so that the count's round trip and the read's overlap. Its result is used only if the
   * request is admitted; it gets the account's ID alone, the one thing of a caller a
   * stale record cannot have wrong. Not started for a key this process saw refused and
   * whose window has not reopened: a client past its limit must not cost the store a read
   * per request (the caller then reads after admission).
   */
  alongside?: (accountId: string) => void,
): Promise<Admission | null> {
  if (key === null) throw unauthorized();
  const hash = hashApiKey(key);
  let record = deps.keys.get(hash);
  // A record kept from an earlier request is checked against the account's version as the
  // request is counted, and read again when it is stale. A record read for this request is
  // counted as read: it holds the account as it stood during the request, and a request
  // that overlaps a change may be taken before it or after it. Checked too, it could be
  // stale twice for one change (the version moves before and after the change's commit),
  // so two requests racing a clock move were refused 503 when a kept record was stale too.
  for (;;) {
    const kept = record !== undefined;
    record ??= await readKey(deps, hash);
    if (bucket === 'sandbox' && record.key.mode !== 'sandbox') {
      // Answered without a count, so nothing would check a kept record: a revoked live
      // key must get its 401 here too.
      if (kept) {
        record = undefined;
        continue;
      }
      return null;
    }
    if (alongside && !deps.keys.refusing(hash, deps.clock.now())) {
      alongside(record.account.id);
      alongside = undefined;
    }
    const decision = await count(deps, record, bucket, kept);
    if (decision !== 'stale') {
      const admitted = admission({ account: record.account, key: record.key }, bucket, decision);
      if (admitted.refusal) deps.keys.refusedUntil(hash, deps.clock.now() + admitted.shown.resetMs);
      return admitted;
    }
    deps.keys.delete(hash);
    record = undefined;
  }
}

async function readKey(deps: DomainDeps, hash: string): Promise<KeyRecord> {
  const record = await deps.store.accounts.findKeyByHash(hash);
  if (!record) {
    deps.keys.delete(hash);
    throw unauthorized();
  }
  deps.keys.set(hash, record);
  return record;
}

/**
 * The plan's buckets live on the account's time; the sandbox clock's own bucket on the
 * service's. A kept record is counted only if the account is still at its version.
 */
function count(deps: DomainDeps, record: KeyRecord, bucket: LimitedBucket, kept: boolean): Promise<RateDecision | 'stale'> {
  const who = { keyId: record.key.id, accountId: record.account.id, version: kept ? record.version : null };
  return bucket === 'sandbox'
    ? deps.store.rateLimits.consume(who, bucket, SANDBOX_LIMITS, deps.clock.now())
    : deps.store.rateLimits.consume(who, bucket, record.account.plan[bucket], accountNow(deps, record.account));
}

function admission(caller: Caller, bucket: LimitedBucket, decision: RateDecision): Admission {
  const shown = activeWindow(decision);
  const resetSeconds = ceilSeconds(shown.resetMs);
  const refusal = decision.allowed
    ? null
    : new DomainError('rate_limit_exceeded', `This key used its ${shown.limit} ${bucket} requests of this ${shown.window}; retry in ${resetSeconds} seconds.`, [], {
        retry_after: resetSeconds,
      });
  return { caller, decision, shown, resetSeconds, refusal };
}

const unauthorized = () => new DomainError('unauthorized', 'Send a valid API key as "Authorization: Bearer <key>".');
