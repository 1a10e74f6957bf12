// Taking one key over its generation limit, for the checks that need a key refused.
// The requests are invalid avatar bodies: refused before any credit is touched, yet
// counted, because every authenticated request counts against the bucket (contract).
// Windows reopen while a run goes on, so each check asks for a fresh refusal right
// before it observes anything; on a key still over its limit that costs one request.
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

/** Sends until the key is refused with 429 (or gives up); not shared between checks. */
export async function refuseNow(ctx: CheckContext, note = 'using up the generation window'): Promise<Refusal> {
  const key = exhaustedKeyFor(ctx);
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
export async function stillRefused(ctx: CheckContext, key: KeyName): Promise<Exchange> {
  return ctx.http.send({ key, method: 'POST', path: '/v1/avatars', json: without(validPromptAvatar(), 'prompt'), on429: 'return', pace: false, note: 'is the key still over its limit?' });
}
