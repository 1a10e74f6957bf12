import type { Clock } from '../domain/clock.ts';
import { DomainError } from '../domain/errors.ts';
import type { LimitedBucket } from '../domain/model.ts';
import { activeWindow, ceilSeconds } from '../domain/rateLimits.ts';
import { SANDBOX_LIMITS, accountNow } from '../domain/sandboxClock.ts';
import type { Store } from '../storage/ports.ts';
import type { Middleware } from './state.ts';

/**
 * Step 2 (RL-*): counts the request against the key's bucket. The headers of the active
 * window go on every answer from here on, success or error, with their X- twins
 * (RL-HEADERS, RL-HEADERS-COMPAT); Retry-After only on the 429 (RL-RETRY-AFTER-ONLY-429).
 */
export function rateLimit(store: Store, clock: Clock, bucket: LimitedBucket): Middleware {
  return async (ctx, next) => {
    const { key, account } = ctx.state.caller!;
    // The plan's buckets live on the account's time; the sandbox clock's own bucket on the service's.
    const decision = bucket === 'sandbox'
      ? await store.rateLimits.consume(key.id, bucket, SANDBOX_LIMITS, clock.now())
      : await store.rateLimits.consume(key.id, bucket, account.plan[bucket], accountNow({ clock }, account));
    const active = activeWindow(decision);
    const reset = ceilSeconds(active.resetMs);
    for (const prefix of ['RateLimit', 'X-RateLimit']) {
      ctx.set(`${prefix}-Limit`, String(active.limit));
      ctx.set(`${prefix}-Remaining`, String(active.remaining));
      ctx.set(`${prefix}-Reset`, String(reset));
    }
    if (!decision.allowed) {
      ctx.set('Retry-After', String(reset));
      throw new DomainError(
        'rate_limit_exceeded',
        `This key used its ${active.limit} ${bucket} requests of this ${active.window}; retry in ${reset} seconds.`,
        [],
        { retry_after: reset },
      );
    }
    await next();
  };
}
