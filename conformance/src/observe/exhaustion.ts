// Taking one key over its generation limit, for the checks that need a key refused.
// The requests are invalid avatar bodies: refused before any credit is touched, yet
// counted, because every authenticated request counts against the bucket (contract).
// Windows reopen while a run goes on, so each check asks for a fresh refusal right
// before it observes anything; on a key still over its limit that costs one request.
//
// The source says "N requests per minute" and no more: a window may be fixed (on the
// clock, or from a key's first request) or sliding (a log of the last minute's requests,
// or a counter weighted across two fixed windows). Under each a refusal ends in its own
// way: at the window's end, as the oldest request counted leaves, or a request at a time
// as the last window's weight falls. `whileRefused` concludes under all of them: an
// observation counts only if the key is still refused right after it, and one that a
// reopening may have spoiled is made again in a fresh window.
import type { CheckContext } from '../context.ts';
import { validPromptAvatar, without } from '../expect.ts';
import type { Exchange, KeyName } from '../http.ts';
import { CONTRACT_LIMITS, type ResolvedOptions } from '../options.ts';

export interface Refusal {
  key: KeyName;
  /** Every request sent to get there, the 429 last when one came. */
  sent: Exchange[];
  /** The 429, when one came. */
  refused: Exchange | undefined;
  limit: number;
  /** When the 429 arrived, runner clock. */
  refusedAt: number | undefined;
  /** From the first send of the burst to its last answer, when one was sent (ms). */
  burstMs?: number;
}

/**
 * The most creates one refusal may send that a service could charge: outside the contract
 * profile, when invalid requests do not use the window up, one more valid avatar than the
 * limit. The limit is the first expected generation limit, the one the pacer learns.
 */
export function refusalCreates(options: Pick<ResolvedOptions, 'profile' | 'expectedLimits'>): { avatar: number } {
  return { avatar: options.profile === 'contract' ? 0 : (options.expectedLimits.generation[0] ?? CONTRACT_LIMITS.generation[0]!) + 1 };
}

/** The key taken over its limit: the second account's, else the main one. */
export function exhaustedKeyFor(ctx: CheckContext): KeyName {
  return ctx.hasKey('second') ? 'second' : 'main';
}

/** Sends until the key (by default the second account's) is refused with 429, or gives up; not shared between checks. */
export async function refuseNow(ctx: CheckContext, note = 'using up the generation window', key: KeyName = exhaustedKeyFor(ctx)): Promise<Refusal> {
  const limit = ctx.http.pacer.gate(key, 'generation').limit ?? ctx.options.expectedLimits.generation[0] ?? CONTRACT_LIMITS.generation[0]!;
  const sent: Exchange[] = [];
  const attempt = async (json: unknown) => {
    const exchange = await ctx.http.send({ key, method: 'POST', path: '/v1/avatars', json, on429: 'return', pace: false, note });
    sent.push(exchange);
    return exchange;
  };
  // Twice the limit and a little more: enough even if a window ends half-way.
  for (let i = 0; i < limit * 2 + 2; i++) {
    const exchange = await attempt(without(validPromptAvatar(), 'prompt'));
    if (exchange.status === 429) return { key, sent, refused: exchange, limit, refusedAt: ctx.now() };
  }
  // One after the other on a loaded machine, each request may have come in a window of
  // its own: one more than the limit, sent at once, land in one window.
  const burstStarted = ctx.now();
  const burst = await Promise.all(Array.from({ length: limit + 1 }, () => ctx.http.send({ key, method: 'POST', path: '/v1/avatars', json: without(validPromptAvatar(), 'prompt'), on429: 'return', pace: false, note: `${note}, all at once` })));
  const burstMs = ctx.now() - burstStarted;
  const refusal = burst.find((exchange) => exchange.status === 429);
  sent.push(...burst.filter((exchange) => exchange !== refusal));
  if (refusal) {
    sent.push(refusal);
    return { key, sent, refused: refusal, limit, refusedAt: refusal.startedAt + refusal.durationMs, burstMs };
  }
  // Under the source alone, refused requests might not count: fall back to valid ones.
  if (!ctx.contract) {
    ctx.note('invalid requests did not use up the window; trying accepted ones');
    for (let i = 0; i < limit + 1; i++) {
      const exchange = await attempt(ctx.shape.avatarBody({ ...validPromptAvatar(), name: `Conformance rate limit ${i}` }));
      if (exchange.status === 429) return { key, sent, refused: exchange, limit, refusedAt: ctx.now() };
    }
  }
  return { key, sent, refused: undefined, limit, refusedAt: undefined, burstMs };
}

/** The first refusal of the run, shared: what rate-limits.over-limit-429 judges. */
export function exhaust(ctx: CheckContext): Promise<Refusal> {
  return ctx.once('exhaustion', () => refuseNow(ctx));
}

/** Whether the key is still over its limit now (a window may have ended meanwhile). */
async function stillRefused(ctx: CheckContext, key: KeyName): Promise<Exchange> {
  return ctx.http.send({ key, method: 'POST', path: '/v1/avatars', json: without(validPromptAvatar(), 'prompt'), on429: 'return', pace: false, note: 'is the key still over its limit?' });
}

/** A refusal the key had, with its 429. */
export type Held = Refusal & { refused: Exchange };

/**
 * Observations under a refusal are made at most this often: the first on the refusal at
 * hand, the second after the window it announced has ended (a fixed window's successor
 * fills at once), the third after a whole window more (a sliding window has then
 * forgotten every earlier request, so a burst fills it at once too).
 */
export const REFUSAL_TRIES = 3;

/** What an observation needs of a refusal still to come: its own request and the confirming one. */
const HOLD_MS = 1500;

/** The seconds a 429 said the key must wait: Retry-After, else RateLimit-Reset. */
export function announcedWaitSeconds(refused: Exchange): number | undefined {
  for (const name of ['retry-after', 'ratelimit-reset']) {
    const value = refused.responseHeaders[name];
    if (value !== undefined && /^\s*\d+\s*$/.test(value)) return Number(value);
  }
  return undefined;
}

/**
 * Whether a refusal may be the shortest window's: what it announced fits in that window,
 * or it announced nothing. A longer wait is a longer window's refusal (the day's), which
 * says nothing of how the shortest one is kept.
 */
export function withinShortestWindow(ctx: CheckContext, refused: Exchange): boolean {
  const announced = announcedWaitSeconds(refused);
  return announced === undefined || announced <= shortestWindowSeconds(ctx);
}

/** The shortest of the windows the run expects, in seconds. */
function shortestWindowSeconds(ctx: CheckContext): number {
  return Math.min(...ctx.options.windowSeconds);
}

/**
 * The latest instant (runner clock) before which the refusal surely holds, by what it
 * announced: the service counted it no earlier than it was sent, and rounded the wait up
 * to whole seconds. Undefined when it announced nothing.
 */
export function surelyRefusedUntil(refused: Exchange): number | undefined {
  const seconds = announcedWaitSeconds(refused);
  return seconds === undefined ? undefined : refused.startedAt + (seconds - 1) * 1000;
}

/**
 * Whether a 429 proves on its own that its key was refused without having used up its own
 * shortest window: it announced a wait that fits in that window (not a longer window's),
 * and the runner had sent that key fewer than half that window's limit in the bucket over
 * the last two such windows. No window kept per key, fixed, sliding (a log, or a counter
 * weighted across two fixed windows) or a token bucket, refuses a key that sent less than
 * its limit over the last two windows; half leaves room for requests still in flight.
 * Such a refusal needs no confirmation that another key was still held: whatever held it,
 * it was not this key's own use within the run (requests of the same key from elsewhere,
 * which the run cannot see, would make any refusal of it unreadable anyway).
 */
export function refusedBelowOwnLimit(ctx: CheckContext, refused: Exchange): boolean {
  const { key, bucket } = refused;
  if (refused.status !== 429 || bucket === undefined || !withinShortestWindow(ctx, refused)) return false;
  const limit = Math.min(...ctx.options.expectedLimits[bucket]);
  // A refusal that names a longer window's limit (a day's can announce a short wait, its
  // oldest request about to leave) says nothing of the shortest one.
  const named = refused.responseHeaders['ratelimit-limit'];
  if (named !== undefined && /^\s*\d+\s*$/.test(named) && Number(named) !== limit) return false;
  const since = refused.startedAt - 2 * shortestWindowSeconds(ctx) * 1000;
  const sent = ctx.http.log.filter((e) => e.key === key && e.bucket === bucket && e.startedAt >= since && e.startedAt <= refused.startedAt).length;
  return 2 * sent < limit;
}

export type WhileRefused<T> = { held: Held; result: T } | { held: undefined; reason: string };

/**
 * Makes `observe` while the exhausted key is refused and keeps only an observation the
 * key was still refused right after. `costly`: the observation may be charged (a valid
 * request), so the first try makes it only on a refusal announced to last; the later
 * ones make it whatever was announced, since some windows (a token bucket, a sliding
 * counter under steady use) only ever refuse for a moment.
 * `conclusive` says why a result proves nothing (undefined: it does).
 * `standsAlone`: a result that proves its point whether or not the key was still refused
 * after it (see refusedBelowOwnLimit), kept without the confirming request (when
 * `conclusive` finds no doubt in it either): on a loaded
 * machine a short window may reopen before that request on every try.
 * `key`: the key taken over its limit, by default the second account's.
 * Between tries the key waits for a fresh window, by the sandbox clock where it has one.
 * Ends with the reason when no try could conclude.
 */
export async function whileRefused<T>(
  ctx: CheckContext,
  observe: (held: Held, attempt: number) => Promise<T>,
  options: { costly?: boolean; conclusive?: (result: T, held: Held) => string | undefined; standsAlone?: (result: T) => boolean; key?: KeyName } = {},
): Promise<WhileRefused<T>> {
  const tries: string[] = [];
  for (let attempt = 1; attempt <= REFUSAL_TRIES; attempt++) {
    const refusal = await refuseNow(ctx, undefined, options.key);
    if (!refusal.refused) return { held: undefined, reason: `the key could not be taken over its limit again${tries.length ? ` (after ${tries.join('; ')})` : ''}` };
    const held = refusal as Held;
    const until = surelyRefusedUntil(held.refused);
    const short = until !== undefined && until - ctx.now() < HOLD_MS;
    if (!(options.costly && short && attempt === 1)) {
      const result = await observe(held, attempt);
      if (options.standsAlone?.(result) && options.conclusive?.(result, held) === undefined) return { held, result };
      const confirm = await stillRefused(ctx, held.key);
      const doubt = confirm.status === 429 ? options.conclusive?.(result, held) : `the window reopened during the observation (confirmed with ${confirm.status})`;
      if (doubt === undefined) return { held, result };
      tries.push(`try ${attempt}: ${doubt}`);
    } else {
      tries.push(`try ${attempt}: the refusal announced ${announcedWaitSeconds(held.refused)} s, too short to observe under`);
    }
    if (attempt === REFUSAL_TRIES) break;
    await freshWindow(ctx, held, attempt);
  }
  ctx.note(`no observation under a held refusal: ${tries.join('; ')}`);
  return { held: undefined, reason: `the key's window reopened on every try, so nothing could be concluded (${tries.join('; ')})` };
}

/**
 * Waits until the key's refusal is over and its window fresh: the first time for the
 * wait the refusal announced, then a whole window (and a second), after which a window
 * of any kind counts none of the key's earlier requests.
 */
async function freshWindow(ctx: CheckContext, held: Held, attempt: number): Promise<void> {
  // The shortest window: a refusal the day's window makes is not waited out (a try that
  // could not conclude says so), and a limit outside the expected ones is not read as a day's.
  const window = shortestWindowSeconds(ctx);
  const announced = announcedWaitSeconds(held.refused) ?? window;
  const seconds = attempt === 1 ? Math.min(announced, window) : window + 1;
  ctx.note(`waiting ${seconds} s for a fresh window on the ${held.key} key (try ${attempt + 1} of ${REFUSAL_TRIES})`);
  await waitFromRefusal(ctx, held.key, held.refused, seconds);
}

/**
 * Lets `seconds` pass for the key from a 429's answer: with a sandbox clock the account's
 * time moves on (plus what passed since); without one, or when the move is refused, the
 * run waits, a quarter second more for the whole-second rounding.
 */
export async function waitFromRefusal(ctx: CheckContext, key: KeyName, refused: Exchange, seconds: number): Promise<void> {
  if (await ctx.clock.advance(key, seconds)) return;
  const until = refused.startedAt + refused.durationMs + seconds * 1000 + 250;
  await ctx.sleep(Math.max(0, until - ctx.now()));
}
