// The sandbox clock (ND-SANDBOX-CLOCK): an account without live keys may move its own
// time forward, so an integrator (or the conformance runner) sees in seconds what takes
// a day or a month: the daily rate-limit windows, the monthly credit period, a job's
// progress and the whole webhook retry schedule. Every rule that reads "now" for an
// account reads `accountNow`; the service's own clock never moves.
import { loadBundle } from '../../../contract/schemas.ts';
import type { components } from '../../../generated/openapi.ts';
import type { Caller, DomainDeps } from './deps.ts';
import { DomainError, validationFailed } from './errors.ts';
import type { Account, WindowLimits } from './model.ts';
import type { ClockMove } from './ports.ts';
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

/**
 * How far an account's time may ever be ahead of the service's (ND-SANDBOX-CLOCK): the
 * contract's maximum of `offset_seconds`, 100 years. Without a cap, a year at a time
 * took an account's time past 9999-12-31 (timestamps no longer RFC 3339, credit periods
 * read from a six-digit year) and then past JavaScript's last date, where every call of
 * the account failed. 100 years past the real time keeps every time the service derives
 * from the account's (a period's end, a key's expiry, a retry) within four-digit years
 * for as long as the real time is before 9899.
 */
export const MAX_OFFSET_SECONDS = offsetLimitSeconds();

function offsetLimitSeconds(): number {
  const schemas = (loadBundle().components as { schemas: Record<string, { properties: Record<string, { maximum?: unknown }> }> }).schemas;
  const maximum = schemas.SandboxClock?.properties.offset_seconds?.maximum;
  if (typeof maximum !== 'number') throw new Error('the contract gives SandboxClock.offset_seconds no maximum');
  return maximum;
}

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

/** A leap second's time of day (`23:59:60`), which RFC 3339 and the schema's date-time allow. */
const LEAP_SECOND = /[t ]\d{2}:\d{2}:60/i;

/**
 * The instant `to` names. A leap second is refused rather than read as the next instant:
 * the service's time, like POSIX time, has no 61st second, so any reading of one would be
 * a guess (POSIX repeats a second there, others smear it), and a client that meant the
 * next day's first instant can say so exactly.
 */
function instantOf(to: string): number {
  if (LEAP_SECOND.test(to)) {
    throw validationFailed([{ field: 'to', rule: 'leap_second', message: "names a leap second (:60), which the service's time does not have; use the next second (:00 of the next minute)" }]);
  }
  const target = Date.parse(to);
  if (Number.isNaN(target)) throw validationFailed([{ field: 'to', rule: 'format', message: 'must be an RFC 3339 date-time, such as 2026-12-01T00:00:00Z' }]);
  return target;
}

const beyondLimit = (field: 'seconds' | 'to', offsetMs: number) =>
  validationFailed([
    {
      field,
      rule: 'offset_limit',
      message: `would put the account's time more than ${MAX_OFFSET_SECONDS} seconds ahead of the service's, the most it may be; it is ${offsetMs / 1000} seconds ahead`,
    },
  ]);

/** How far the request moves the clock, in ms from the account's time when it was read. */
function requestedMove(deps: DomainDeps, caller: Caller, body: SandboxClockAdvance): ClockMove {
  if ('seconds' in body && body.seconds !== undefined) return { byMs: body.seconds * 1000 };
  const target = instantOf(body.to!);
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
  const move = requestedMove(deps, caller, body);
  // The store holds the cap against the offset it moves, so concurrent moves cannot pass it together.
  const moved = await deps.store.accounts.advanceClock(caller.account.id, move, MAX_OFFSET_SECONDS * 1000);
  if (!moved.ok && moved.reason === 'offset_limit') throw beyondLimit('byMs' in move ? 'seconds' : 'to', moved.offsetMs);
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
