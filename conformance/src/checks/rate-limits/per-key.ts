import { defineCheck, STATEFUL } from '../../check.ts';
import type { CheckContext } from '../../context.ts';
import { describe, validPromptAvatar, without } from '../../expect.ts';
import type { Exchange, KeyName } from '../../http.ts';
import { announcedWaitSeconds, exhaust, REFUSAL_TRIES, refusalCreates, refusedBelowOwnLimit, whileRefused, withinShortestWindow, type WhileRefused } from '../../observe/exhaustion.ts';
import { fail, skip } from '../../outcome.ts';

/** A request of another key while `exhausted` (by default the second account's) is held over its limit: the observer's with most room in its own window. */
function observeOthers(ctx: CheckContext, observers: readonly KeyName[], exhausted?: KeyName): Promise<WhileRefused<Exchange>> {
  return whileRefused(
    ctx,
    async (exhaustion) => {
      const candidates = observers.filter((key) => key !== exhaustion.key);
      const other = candidates.sort((a, b) => ctx.http.pacer.gate(b, 'generation').capacity() - ctx.http.pacer.gate(a, 'generation').capacity())[0]!;
      return ctx.http.send({ key: other, method: 'POST', path: '/v1/avatars', json: without(validPromptAvatar(), 'prompt'), on429: 'return', note: `the ${other} key while the ${exhaustion.key} key is over its limit` });
    },
    // The other key refused after sending little: that is no window of its own.
    { standsAlone: (exchange) => refusedBelowOwnLimit(ctx, exchange), ...(exhausted === undefined ? {} : { key: exhausted }) },
  );
}

export default defineCheck({
  id: 'rate-limits.per-key',
  title: "One key over its limit leaves the other keys' limits alone",
  asserts: 'While one key is over its generation limit, another account\'s key is admitted: its request is answered on its merits, not with 429.',
  clauses: ['RL-PER-KEY'],
  profiles: STATEFUL,
  shares: ['exhaustion'],
  // Its own refusals after the shared one, one a try. A second round takes only the empty account's key over, which nothing is charged to.
  creates: (options) => ({ avatar: REFUSAL_TRIES * refusalCreates(options).avatar }),
  phase: 'exhaust',
  // A fresh window awaited between tries, when a window reopened during one; twice when the first round's refusal was the day's.
  waits: (a) => 2 * (REFUSAL_TRIES - 1) * a.window,
  async run(ctx) {
    const keys = (['main', 'second', 'empty'] as KeyName[]).filter((key) => ctx.hasKey(key));
    if (keys.length < 2) skip('needs two keys: pass --second-key or --empty-key');
    if (!(await exhaust(ctx)).refused) skip('no key could be taken over its limit (see rate-limits.over-limit-429)');
    let observed = await observeOthers(ctx, keys);
    if (observed.held && observed.result.status !== 429 && !withinShortestWindow(ctx, observed.held.refused)) {
      // The key was held off by a longer window (its day's, used up by the run's earlier
      // refusals): the other key's admission shows that window is per key, not the shortest
      // one. Take a key with room left in its day over its shortest window, and look again
      // with a key that is not the day-refused one.
      const dayRefused = observed.held.key;
      const observers = keys.filter((key) => key !== dayRefused);
      if (observers.includes('empty') && observers.length >= 2) {
        ctx.note(`the ${dayRefused} key was refused for ${announcedWaitSeconds(observed.held.refused)} s, longer than the shortest window: taking the empty key over its limit instead`);
        const again = await observeOthers(ctx, observers, 'empty');
        if (again.held) observed = again;
        else ctx.note(`the shortest window could not be observed on the empty key: ${again.reason}`);
      } else {
        ctx.note(`the ${dayRefused} key was refused by a window longer than the shortest, and no third key (--empty-key) could be taken over the shortest one: only the longer window was seen to be per key`);
      }
    }
    if (!observed.held) skip(observed.reason);
    const { held, result: exchange } = observed;
    if (exchange.status === 429) {
      fail({
        clause: 'RL-PER-KEY',
        message: `the ${exchange.key} key was refused while only the ${held.key} key had used up its window`,
        expected: 'the other key admitted (its request answered on its merits, here 4xx invalid)',
        received: describe(exchange),
        fix: 'Keep one counter per API key and bucket.',
        exchanges: [held.refused, exchange],
      });
    }
  },
});
