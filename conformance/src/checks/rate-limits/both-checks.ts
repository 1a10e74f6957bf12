import { defineCheck, STATEFUL } from '../../check.ts';
import { describe, isSuccess } from '../../expect.ts';
import { exhaust, refusalCreates, refuseNow } from '../../observe/exhaustion.ts';
import { advertised } from '../../observe/rate-limit-headers.ts';
import { fail, skip } from '../../outcome.ts';
import { SETTLE_GRACE_MAX_SECONDS } from '../../world.ts';

export default defineCheck({
  id: 'rate-limits.both-checks',
  title: 'A job is accepted only within the rate limit and with enough credits',
  asserts: 'A valid request with credits but over the rate limit is refused with 429 and starts no job (no webhook ever comes for it); a valid request within the limit but without credits is refused too.',
  clauses: ['RL-BOTH-CHECKS'],
  profiles: STATEFUL,
  shares: ['exhaustion'],
  // Its own refusal after the shared one, and a valid request over the limit.
  creates: (options) => ({ avatar: refusalCreates(options).avatar + 1 }),
  // Listening for the webhook of a job the refused request might have started.
  waits: () => SETTLE_GRACE_MAX_SECONDS,
  phase: 'exhaust',
  async run(ctx) {
    if (!(await exhaust(ctx)).refused) skip('no key could be taken over its limit (see rate-limits.over-limit-429)');
    const exhaustion = await refuseNow(ctx);
    if (!exhaustion.refused) skip('the key could not be taken over its limit again');
    // Credits but no room: a valid request right after the 429 must be refused too.
    const url = ctx.world.webhookUrl('refused-429', 'ok');
    const body = ctx.shape.avatarBody({ type: 'prompt', name: 'Conformance over the limit', prompt: 'A presenter that must never be generated.' }, { webhookUrl: url });
    const sentAt = ctx.now();
    const exchange = await ctx.http.send({ key: exhaustion.key, method: 'POST', path: '/v1/avatars', json: body, on429: 'return', pace: false, note: 'valid request over the rate limit' });
    const retryAfter = Number(exhaustion.refused.responseHeaders['retry-after'] ?? exhaustion.refused.responseHeaders['ratelimit-reset'] ?? NaN);
    // Retry-After counts from the 429's answer, which came after its request was sent: from
    // when the runner read it, on a loaded runner a while later, the window may have reopened.
    const windowStillClosed = Number.isNaN(retryAfter) || sentAt < exhaustion.refused.startedAt + retryAfter * 1000;
    if (isSuccess(exchange)) {
      ctx.world.trackUnexpected('unexpected-avatar-over-limit', 'avatar', exhaustion.key, exchange);
      // Its own headers may show a window with room, a new one: Retry-After is rounded up to
      // whole seconds, so the window may reopen up to a second before it says, and a loaded
      // runner sends the request that late.
      const after = advertised(exchange);
      const fresh = after !== undefined && after.remaining > 0 && after.limit === advertised(exhaustion.refused)?.limit;
      if (!windowStillClosed || fresh) skip(`the window reopened before the valid request could be counted${fresh ? ` (its answer shows ${after.remaining} of ${after.limit} left)` : ''}; nothing to conclude`);
      fail({ clause: 'RL-BOTH-CHECKS', message: 'a valid request with credits but over the rate limit was accepted', expected: '429', received: describe(exchange), fix: 'Check the rate limit before accepting any generation request.', exchanges: [exhaustion.refused, exchange] });
    }
    if (exchange.status !== 429 && windowStillClosed) {
      fail({ clause: 'RL-BOTH-CHECKS', message: `a valid request over the rate limit was answered ${exchange.status}`, expected: '429', received: describe(exchange), fix: 'The rate limit is checked first, before the request and its credits.', exchanges: [exchange] });
    }
    // Room but no credits: the 402 of the key without credits.
    if (ctx.hasKey('empty')) {
      const refused = await ctx.world.insufficientAttempt();
      if (isSuccess(refused)) fail({ clause: 'RL-BOTH-CHECKS', message: 'a request within the rate limit but without credits was accepted', expected: '402', received: describe(refused), exchanges: [refused] });
    }
    if (ctx.receiver) {
      const deliveries = await ctx.receiver.waitFor('refused-429', 1, ctx.world.settleGraceMs(exchange.startedAt));
      if (deliveries.length) fail({ clause: 'RL-BOTH-CHECKS', message: 'a webhook arrived for a request refused with 429: a job was started anyway', received: `${deliveries.length} delivery(ies)` });
    }
  },
});
