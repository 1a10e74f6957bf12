import { defineCheck, STATEFUL } from '../../check.ts';
import { describe, validPromptAvatar, without } from '../../expect.ts';
import type { KeyName } from '../../http.ts';
import { exhaust, REFUSAL_TRIES, refusalCreates, whileRefused } from '../../observe/exhaustion.ts';
import { fail, skip } from '../../outcome.ts';

export default defineCheck({
  id: 'rate-limits.per-key',
  title: "One key over its limit leaves the other keys' limits alone",
  asserts: 'While one key is over its generation limit, another account\'s key is admitted: its request is answered on its merits, not with 429.',
  clauses: ['RL-PER-KEY'],
  profiles: STATEFUL,
  shares: ['exhaustion'],
  // Its own refusals after the shared one, one a try.
  creates: (options) => ({ avatar: REFUSAL_TRIES * refusalCreates(options).avatar }),
  phase: 'exhaust',
  // A fresh window awaited between tries, when a window reopened during one.
  waits: (a) => (REFUSAL_TRIES - 1) * a.window,
  async run(ctx) {
    const others = (['main', 'second', 'empty'] as KeyName[]).filter((key) => ctx.hasKey(key));
    if (others.length < 2) skip('needs two keys: pass --second-key or --empty-key');
    if (!(await exhaust(ctx)).refused) skip('no key could be taken over its limit (see rate-limits.over-limit-429)');
    const observed = await whileRefused(ctx, async (exhaustion) => {
      // The other key with most room in its own window.
      const candidates = others.filter((key) => key !== exhaustion.key);
      const other = candidates.sort((a, b) => ctx.http.pacer.gate(b, 'generation').capacity() - ctx.http.pacer.gate(a, 'generation').capacity())[0]!;
      return ctx.http.send({ key: other, method: 'POST', path: '/v1/avatars', json: without(validPromptAvatar(), 'prompt'), on429: 'return', note: `the ${other} key while the ${exhaustion.key} key is over its limit` });
    });
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
