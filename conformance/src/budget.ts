// What a run may spend, stated before its first request: the most creates of each kind the
// selected checks and the run's shared jobs may send on keys with credits, and the
// credits they cost at the implementation profile's prices. A run given --max-credits
// below that does not start; a run on a live key does not start without one. After the
// run, what it spent is read from the balances GET /v1/me shows before and after.
import type { Check, Creates } from './check.ts';
import type { Exchange } from './http.ts';
import type { JobKind } from './implementation/profile.ts';
import type { Shape } from './implementation/shape.ts';
import type { ResolvedOptions } from './options.ts';
import { counted } from './report/text.ts';
import { refusalCreates } from './observe/exhaustion.ts';
import { startsJobs } from './selection.ts';
import { sharedCreates } from './world.ts';

export interface PlannedBudget {
  /** The most creates of each kind the run may send that a service could charge. */
  creates: Record<JobKind, number>;
  /** Those creates: the most generation requests that can be charged. */
  requests: number;
  /** At the profile's prices; undefined where the profile states none. */
  credits: number | undefined;
  /**
   * Of those creates, the ones sent to take a key over its generation limit (the
   * rate-limit checks): a service charges them only where it accepts them rather than
   * refusing them, so they are most of the figure and seldom spent.
   */
  windowCreates: Record<JobKind, number>;
  prices: Record<JobKind, number> | undefined;
}

const KINDS: readonly JobKind[] = ['avatar', 'avatar_video'];

export function plannedBudget(selected: readonly Check[], options: ResolvedOptions, shape: Shape): PlannedBudget {
  const creates: Record<JobKind, number> = { avatar: 0, avatar_video: 0 };
  const windowCreates: Record<JobKind, number> = { avatar: 0, avatar_video: 0 };
  const add = (more: Creates, toWindow = false) => {
    for (const kind of KINDS) {
      creates[kind] += more[kind] ?? 0;
      if (toWindow) windowCreates[kind] += more[kind] ?? 0;
    }
  };
  if (startsJobs(selected, options)) add(sharedCreates(shape.canFail()));
  const running = selected.filter((check) => check.profiles.includes(options.profile));
  for (const check of running) if (check.creates) add(check.creates(options), usesWindowUp(check));
  if (running.some((check) => check.shares?.includes('exhaustion'))) add(refusalCreates(options), true);
  const prices = shape.price('avatar') !== undefined && shape.price('avatar_video') !== undefined ? { avatar: shape.price('avatar')!, avatar_video: shape.price('avatar_video')! } : undefined;
  return {
    creates,
    requests: creates.avatar + creates.avatar_video,
    credits: prices ? creates.avatar * prices.avatar + creates.avatar_video * prices.avatar_video : undefined,
    windowCreates,
    prices,
  };
}

/** A check that takes a key over its generation limit: what it creates is meant to be refused. */
function usesWindowUp(check: Check): boolean {
  return check.phase === 'exhaust' || (check.shares?.includes('exhaustion') ?? false);
}

/**
 * The budget in one line, for the console and the reports: the most the run could spend
 * if every create it may send were charged (what --max-credits is held to), and what that
 * figure is made of, so that a reader does not take it for what a run spends (a correct
 * service refuses the creates that use a window up and charges none of them).
 */
export function describeBudget(budget: PlannedBudget): string {
  const { avatar, avatar_video: video } = budget.creates;
  const kinds = `${counted(avatar, 'avatar')} and ${counted(video, 'video')}`;
  if (budget.requests === 0) return 'spends no credits: no check of this selection creates a job';
  const windowed = budget.windowCreates.avatar + budget.windowCreates.avatar_video;
  const windowCredits = budget.prices ? budget.windowCreates.avatar * budget.prices.avatar + budget.windowCreates.avatar_video * budget.prices.avatar_video : undefined;
  const made =
    windowed === 0
      ? 'every create counted as charged'
      : `every create counted as charged: ${counted(windowed, 'create')}${windowCredits === undefined ? '' : ` (${windowCredits} credits)`} ${windowed === 1 ? 'is' : 'are'} sent by the rate-limit checks to use a window up, and a service charges ${windowed === 1 ? 'it' : 'them'} only if it accepts ${windowed === 1 ? 'it' : 'them'} instead of refusing with 429, so a correct run spends far less`;
  if (budget.credits === undefined) return `at most ${counted(budget.requests, 'generation request')} that can be charged (${kinds}), ${made}; the implementation profile states no prices`;
  return `at most ${budget.credits} credits and ${counted(budget.requests, 'generation request')} that can be charged (${kinds} at ${budget.prices!.avatar} and ${budget.prices!.avatar_video}), ${made}`;
}

/** Why a run must not start, in one line; undefined when it may. */
export function overBudget(budget: PlannedBudget, maxCredits: number | undefined): string | undefined {
  if (maxCredits === undefined || budget.requests === 0) return undefined;
  if (budget.credits === undefined) return `--max-credits ${maxCredits} cannot be held: the implementation profile states no prices, and the selected checks may send ${counted(budget.requests, 'create')}`;
  if (budget.credits > maxCredits) return `--max-credits ${maxCredits} is less than the run may spend: ${describeBudget(budget)}; raise it, or leave checks out with --only or --skip`;
  return undefined;
}

/** The one-line refusal of a run on a live key that was given no --max-credits; undefined when it spends nothing. */
export function liveRefusal(budget: PlannedBudget, why: string): string | undefined {
  if (budget.requests === 0) return undefined;
  return `${why}: its jobs are billed, so pass --max-credits <n> (the selected checks ${describeBudget(budget).replace(/^at most/, 'may spend at most')})`;
}

export interface SpentReport {
  /** Credits the run took from the balances it could read, summed over its keys. */
  credits: number;
  /** How it was read: the available balance that went down, or else the used one that went up. */
  from: 'used' | 'available';
  keys: string[];
  /** Keys read up to the clock checks, which moved their account's time (and maybe into a new credit period); their later creates are not counted. */
  beforeClockMoves?: string[];
}

/** What was spent in words, for the console and the reports. */
export function describeSpent(spent: SpentReport): string {
  const early = spent.beforeClockMoves?.length ? `; for ${spent.beforeClockMoves.join(' and ')} up to the clock checks, which moved the account's time (maybe into a new credit period), so creates after them are not counted` : '';
  return `${spent.credits} credits, by the ${spent.from} balance GET /v1/me showed before and after (${spent.keys.join(', ')})${early}`;
}

/** What the balances GET /v1/me showed before and after the run say it spent; undefined where they show none. */
export function spentFrom(shape: Shape, pairs: readonly { key: string; before: Exchange | undefined; after: Exchange | undefined; beforeClockPhase?: boolean }[]): SpentReport | undefined {
  let credits = 0;
  let from: SpentReport['from'] | undefined;
  const keys: string[] = [];
  const early: string[] = [];
  for (const { key, before, after, beforeClockPhase } of pairs) {
    const a = shape.balance(before);
    const b = shape.balance(after);
    if (!a || !b) continue;
    // Available also counts what is still held for a job in flight at the end; used only what was charged.
    if (a.available !== undefined && b.available !== undefined) {
      credits += a.available - b.available;
      from ??= 'available';
    } else if (a.used !== undefined && b.used !== undefined) {
      credits += b.used - a.used;
      from ??= 'used';
    } else continue;
    keys.push(key);
    if (beforeClockPhase) early.push(key);
  }
  return from === undefined ? undefined : { credits, from, keys, ...(early.length ? { beforeClockMoves: early } : {}) };
}
