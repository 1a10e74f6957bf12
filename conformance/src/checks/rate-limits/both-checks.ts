import { defineCheck, STATEFUL } from '../../check.ts';
import { describe, isSuccess } from '../../expect.ts';
import type { Exchange } from '../../http.ts';
import { exhaust, type Held, REFUSAL_TRIES, refusalCreates, surelyRefusedUntil, whileRefused } from '../../observe/exhaustion.ts';
import { advertised } from '../../observe/rate-limit-headers.ts';
import { fail, skip } from '../../outcome.ts';
import { settleGraceMaxSeconds } from '../../world.ts';

export default defineCheck({
  id: 'rate-limits.both-checks',
  title: 'A job is accepted only within the rate limit and with enough credits',
  asserts: 'A valid request with credits but over the rate limit is refused with 429 and starts no job (no webhook ever comes for it); a valid request within the limit but without credits is refused too.',
  clauses: ['RL-BOTH-CHECKS'],
  profiles: STATEFUL,
  shares: ['exhaustion'],
  // Its own refusal and a valid request over the limit, on each try.
  creates: (options) => ({ avatar: REFUSAL_TRIES * (refusalCreates(options).avatar + 1) }),
  // A fresh window awaited between tries; listening for the webhook of a job the refused request might have started.
  waits: (a) => (REFUSAL_TRIES - 1) * a.window + settleGraceMaxSeconds(a.options),
  phase: 'exhaust',
  async run(ctx) {
    if (!(await exhaust(ctx)).refused) skip('no key could be taken over its limit (see rate-limits.over-limit-429)');
    // Credits but no room: a valid request right after the 429 must be refused too. Each
    // try has a webhook URL of its own, so that a job a reopened window rightly accepted
    // is never taken for one a refusal started.
    const observed = await whileRefused(
      ctx,
      async (held, attempt) => {
        const label = attempt === 1 ? 'refused-429' : `refused-429-try-${attempt}`;
        const url = ctx.world.webhookUrl(label, 'ok');
        const body = ctx.shape.avatarBody({ type: 'prompt', name: 'Conformance over the limit', prompt: 'A presenter that must never be generated.' }, { webhookUrl: url });
        const exchange = await ctx.http.send({ key: held.key, method: 'POST', path: '/v1/avatars', json: body, on429: 'return', pace: false, note: 'valid request over the rate limit' });
        if (isSuccess(exchange)) ctx.world.trackUnexpected(`unexpected-avatar-over-limit-${attempt}`, 'avatar', held.key, exchange);
        return { exchange, label };
      },
      {
        costly: true,
        conclusive: ({ exchange }, held) => {
          if (exchange.status === 429 || surelyCounted(exchange, held)) return undefined;
          // Its own headers may show a window with room, a new one.
          const after = advertised(exchange);
          const fresh = after !== undefined && after.remaining > 0 && after.limit === advertised(held.refused)?.limit;
          return `the window may have reopened before the valid request was counted (answered ${exchange.status}${fresh ? `, showing ${after.remaining} of ${after.limit} left` : ''})`;
        },
      },
    );
    if (!observed.held) skip(observed.reason);
    const { held, result: { exchange, label } } = observed;
    if (isSuccess(exchange)) {
      fail({ clause: 'RL-BOTH-CHECKS', message: 'a valid request with credits but over the rate limit was accepted', expected: '429', received: describe(exchange), fix: 'Check the rate limit before accepting any generation request.', exchanges: [held.refused, exchange] });
    }
    if (exchange.status !== 429) {
      fail({ clause: 'RL-BOTH-CHECKS', message: `a valid request over the rate limit was answered ${exchange.status}`, expected: '429', received: describe(exchange), fix: 'The rate limit is checked first, before the request and its credits.', exchanges: [exchange] });
    }
    // Room but no credits: the 402 of the key without credits.
    if (ctx.hasKey('empty')) {
      const refused = await ctx.world.insufficientAttempt();
      if (isSuccess(refused)) fail({ clause: 'RL-BOTH-CHECKS', message: 'a request within the rate limit but without credits was accepted', expected: '402', received: describe(refused), exchanges: [refused] });
    }
    if (ctx.receiver) {
      const deliveries = await ctx.receiver.waitFor(label, 1, ctx.world.settleGraceMs(exchange.startedAt));
      if (deliveries.length) fail({ clause: 'RL-BOTH-CHECKS', message: 'a webhook arrived for a request refused with 429: a job was started anyway', received: `${deliveries.length} delivery(ies)` });
    }
  },
});

/**
 * Whether the service surely counted the request while the refusal held: answered before
 * the earliest the refusal could end by what it announced (Retry-After counts from the
 * 429's answer, rounded up to whole seconds, so the window may reopen up to a second
 * before it says). A refusal that announced nothing holds, as far as anyone can tell.
 */
function surelyCounted(exchange: Exchange, held: Held): boolean {
  const until = surelyRefusedUntil(held.refused);
  return until === undefined || exchange.startedAt + exchange.durationMs < until;
}
