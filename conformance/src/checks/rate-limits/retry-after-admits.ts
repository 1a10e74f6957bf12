import { defineCheck, STATEFUL } from '../../check.ts';
import { describe, validPromptAvatar, without } from '../../expect.ts';
import { exhaust, refusalCreates, refuseNow, waitFromRefusal } from '../../observe/exhaustion.ts';
import { advertised, windowFor } from '../../observe/rate-limit-headers.ts';
import { fail, skip } from '../../outcome.ts';

export default defineCheck({
  id: 'rate-limits.retry-after-admits',
  title: 'Waiting Retry-After seconds is enough to be admitted again',
  asserts: 'A key refused with 429 that waits the Retry-After seconds it was given is admitted again: waiting the announced time is enough.',
  clauses: ['RL-429'],
  profiles: STATEFUL,
  shares: ['exhaustion'],
  // Its own refusal after the shared one.
  creates: (options) => (refusalCreates(options)),
  phase: 'exhaust',
  async run(ctx) {
    if (!(await exhaust(ctx)).refused) skip('no key could be taken over its limit (see rate-limits.over-limit-429)');
    const { key, refused } = await refuseNow(ctx);
    if (!refused) skip('the key could not be taken over its limit again');
    const header = refused.responseHeaders['retry-after'];
    if (header === undefined || !/^\s*\d+\s*$/.test(header)) skip('the 429 carried no Retry-After seconds to honour (see rate-limits.over-limit-429)');
    const seconds = Number(header);
    const window = windowFor(ctx.options, 'generation', advertised(refused)?.limit ?? ctx.http.pacer.gate(key, 'generation').limit);
    // Never wait on a value that is already wrong: over-limit-429 reports it.
    if (seconds > window + 1) skip(`Retry-After is ${seconds} s, longer than the ${window} s window (see rate-limits.over-limit-429)`);
    if (seconds > ctx.options.maxRateLimitWaitSeconds) skip(`Retry-After is ${seconds} s, beyond the ${ctx.options.maxRateLimitWaitSeconds} s this run may wait`);
    // Retry-After counts from the answer.
    await waitFromRefusal(ctx, key, refused, seconds);
    const exchange = await ctx.http.send({ key, method: 'POST', path: '/v1/avatars', json: without(validPromptAvatar(), 'prompt'), on429: 'return', pace: false, note: 'after waiting Retry-After' });
    if (exchange.status === 429) {
      fail({
        clause: 'RL-429',
        message: `the key was still refused after waiting the ${seconds} s that Retry-After asked for`,
        expected: 'admitted again (here: 4xx for the invalid body, not 429)',
        received: describe(exchange),
        fix: 'Set Retry-After to the seconds until the refusing window admits a request again.',
        exchanges: [refused, exchange],
      });
    }
  },
});
