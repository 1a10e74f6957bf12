import { defineCheck, STATEFUL } from '../../check.ts';
import { describe, expectProblem, where } from '../../expect.ts';
import { isJson } from '../../world.ts';
import { exhaust } from '../../observe/exhaustion.ts';
import { advertised, windowFor } from '../../observe/rate-limit-headers.ts';
import { fail, skip } from '../../outcome.ts';

export default defineCheck({
  id: 'rate-limits.over-limit-429',
  title: 'Over the generation limit: 429 rate_limit_exceeded with Retry-After in seconds',
  asserts: 'A key that sends more generation requests than its window allows is refused with 429, a Retry-After in whole seconds no longer than the refusing window, and the code rate_limit_exceeded.',
  clauses: ['RL-429'],
  decisions: ['ND-ERROR-BODY', 'ND-ERRORS'],
  profiles: STATEFUL,
  shares: ['exhaustion'],
  phase: 'exhaust',
  async run(ctx) {
    const { refused, sent, limit, key, burstMs } = await exhaust(ctx);
    // Even sent at once, the last requests were answered after a window's length: they
    // may all have come in windows of their own, which proves nothing of the limit.
    const windowSeconds = windowFor(ctx.options, 'generation', limit);
    if (!refused && burstMs !== undefined && burstMs >= windowSeconds * 1000) {
      skip(`${limit + 1} generation requests sent at once on the ${key} key took ${(burstMs / 1000).toFixed(1)} s to be answered, longer than the ${windowSeconds} s window: the runner could not fill one window to see a refusal`);
    }
    if (!refused) {
      fail({
        clause: 'RL-429',
        message: `${sent.length} generation requests on the ${key} key (limit ${limit} a window) and none was refused`,
        expected: '429 once the window is used up',
        received: `statuses ${[...new Set(sent.map((e) => e.status))].join(', ')}`,
        fix: 'Count every authenticated generation request per key and refuse those beyond the limit with 429.',
        exchanges: sent.slice(-2),
      });
    }
    const retryAfter = refused.responseHeaders['retry-after'];
    const seconds = retryAfter !== undefined && /^\s*\d+\s*$/.test(retryAfter) ? Number(retryAfter) : undefined;
    const isDate = retryAfter !== undefined && !Number.isNaN(Date.parse(retryAfter));
    if (retryAfter === undefined || (seconds === undefined && (ctx.contract || !isDate))) {
      fail({ clause: 'RL-429', message: retryAfter === undefined ? 'the 429 has no Retry-After header' : `Retry-After is not a number of seconds: ${JSON.stringify(retryAfter)}`, expected: 'Retry-After: <seconds>', received: retryAfter ?? 'no Retry-After', fix: 'Send Retry-After with the seconds until the window admits a request again.', exchanges: [refused] });
    }
    // Seconds until the refusing window admits again: never longer than that window.
    const window = windowFor(ctx.options, 'generation', advertised(refused)?.limit ?? limit);
    if (seconds !== undefined && seconds > window + 1) {
      fail({ clause: 'RL-429', message: `Retry-After asks for ${seconds} s, longer than the ${window} s window that refused the request`, expected: `Retry-After of at most ${window} s`, received: `Retry-After: ${retryAfter}`, fix: 'Send the seconds until the refusing window admits a request again, not a longer window\'s or a Unix time.', exchanges: [refused] });
    }
    if (ctx.contract) {
      expectProblem(refused, 429, 'rate_limit_exceeded', 'RL-429', 'a request over the limit');
      if (seconds === undefined || seconds < 1) fail({ clause: 'RL-429', message: 'Retry-After is below 1', expected: 'an integer of at least 1', received: String(retryAfter), exchanges: [refused] });
      const body = isJson(refused.json) ? refused.json : {};
      if (body.retry_after !== seconds) fail({ clause: 'ND-ERROR-BODY', message: 'the problem\'s retry_after differs from the Retry-After header', expected: String(seconds), received: JSON.stringify(body.retry_after), fix: 'Put the same seconds in retry_after.', exchanges: [refused] });
    } else if (!ctx.shape.carries(refused, 'rate_limit_exceeded')) {
      fail({ clause: 'RL-429', message: 'the 429 does not carry the code rate_limit_exceeded', expected: where(ctx, 'rate_limit_exceeded'), received: describe(refused), fix: 'Name the code rate_limit_exceeded in the error body.', exchanges: [refused] });
    }
  },
});
