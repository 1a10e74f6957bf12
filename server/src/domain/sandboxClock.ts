// The sandbox clock (ND-SANDBOX-CLOCK): an account without live keys may move its own
// time forward, so an integrator (or the conformance runner) sees in seconds what takes
// a day or a month: the daily rate-limit windows, the monthly credit period, a job's
// progress and the whole webhook retry schedule. Every rule that reads "now" for an
// account reads `accountNow`; the service's own clock never moves.
import type { components } from '../../../generated/openapi.ts';
import type { Caller, DomainDeps } from './deps.ts';
import { DomainError, validationFailed } from './errors.ts';
import type { Account, WindowLimits } from './model.ts';
import { contractLimits } from './rateLimits.ts';

type SandboxClockResource = components['schemas']['SandboxClock'];
type SandboxClockAdvance = components['schemas']['SandboxClockAdvance'];

/**
 * The sandbox clock's own rate limit, counted on the service's time: moving the clock
 * must work when the account's read window is spent, and must not reset its own limit.
 */
export const SANDBOX_LIMITS: WindowLimits = contractLimits('sandbox');

/** The longest single move: a year and a day, enough to cross any day, month or retry. */
export const MAX_ADVANCE_SECONDS = 366 * 86_400;

/** The account's time: the service's time plus how far the account moved its clock. */
export function accountNow(deps: Pick<DomainDeps, 'clock'>, account: Pick<Account, 'clockOffsetMs'>): number {
  return deps.clock.now() + account.clockOffsetMs;
}

function resource(deps: DomainDeps, offsetMs: number): SandboxClockResource {
  return {
    object: 'sandbox_clock',
    now: new Date(deps.clock.now() + offsetMs).toISOString(),
    offset_seconds: offsetMs / 1000,
  };
}

export function readSandboxClock(deps: DomainDeps, caller: Caller): SandboxClockResource {
  return resource(deps, caller.account.clockOffsetMs);
}

/** How far the request moves the clock, in ms from the account's time when it was read. */
function requestedMove(deps: DomainDeps, caller: Caller, body: SandboxClockAdvance): { byMs: number } | { toOffsetMs: number } {
  if ('seconds' in body && body.seconds !== undefined) return { byMs: body.seconds * 1000 };
  const target = Date.parse(body.to!);
  const now = accountNow(deps, caller.account);
  if (target <= now) {
    throw validationFailed([{ field: 'to', rule: 'after_now', message: `must be later than the account's time, ${new Date(now).toISOString()}` }]);
  }
  if (target - now > MAX_ADVANCE_SECONDS * 1000) {
    throw validationFailed([{ field: 'to', rule: 'maximum', message: `must be at most ${MAX_ADVANCE_SECONDS} seconds after the account's time` }]);
  }
  return { toOffsetMs: target - deps.clock.now() };
}

/**
 * Moves the caller's account time forward. A `to` already passed is refused (422
 * `after_now`), and one passed by a concurrent move in the meantime moves nothing, so a
 * `to` never moves the clock twice; `seconds` always moves.
 */
export async function advanceSandboxClock(deps: DomainDeps, caller: Caller, body: SandboxClockAdvance): Promise<SandboxClockResource> {
  const moved = await deps.store.accounts.advanceClock(caller.account.id, requestedMove(deps, caller, body));
  if (!moved.ok) {
    throw new DomainError(
      'sandbox_clock_unavailable',
      moved.reason === 'live_key'
        ? 'This account has a live key, so its time is real time and cannot be moved.'
        : 'This account no longer exists.',
    );
  }
  if (moved.movedMs > 0) deps.onClockAdvanced?.(caller.account.id);
  return resource(deps, moved.offsetMs);
}
