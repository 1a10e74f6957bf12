import { ALL, defineCheck } from '../../check.ts';
import type { CheckContext } from '../../context.ts';
import type { Exchange, KeyName } from '../../http.ts';
import { advertised, limitedAnswers, remainingRegressions, windowFor } from '../../observe/rate-limit-headers.ts';
import { fail } from '../../outcome.ts';

const NAMES = ['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset'];

export default defineCheck({
  id: 'rate-limits.headers-on-answers',
  title: 'Successes and 429s carry RateLimit-Limit, -Remaining and -Reset that describe the active window',
  asserts:
    'Every success and every 429 on a bucketed operation carries RateLimit-Limit, -Remaining and -Reset as non-negative integers, and they mean what the source says: Remaining never exceeds Limit; Reset is a number of seconds no longer than the window the limit belongs to; and between two answers of one key that describe the same window, Remaining goes down with each counted request and never up.',
  clauses: ['RL-HEADERS'],
  profiles: ALL,
  phase: 'passive',
  async run(ctx) {
    const answers = limitedAnswers(ctx.http.log);
    if (answers.length === 0) fail({ clause: 'RL-HEADERS', message: 'no successful or 429 answer was recorded to inspect' });
    const fix = 'Add the three RateLimit headers of the active window to every success and every 429.';
    const bad = answers.filter((e) => advertised(e) === undefined);
    const overfull = answers.filter((e) => Number(e.responseHeaders['ratelimit-remaining']) > Number(e.responseHeaders['ratelimit-limit']));
    const offenders = [...bad, ...overfull];
    if (offenders.length > 0) {
      const first = offenders[0]!;
      fail({
        clause: 'RL-HEADERS',
        message: `${bad.length} of ${answers.length} successful or 429 answers lack a RateLimit header (or it is not a non-negative integer)${overfull.length ? `; ${overfull.length} show more remaining than the limit` : ''}`,
        expected: NAMES.map((n) => `${n}: <integer>`).join(', '),
        received: NAMES.map((n) => `${n}: ${first.responseHeaders[n] ?? '(absent)'}`).join(', '),
        fix,
        exchanges: offenders.slice(0, 3),
      });
    }
    judgeReset(ctx, answers);
    // The mock answers its examples: fixed numbers that describe no window.
    if (ctx.profile === 'mock') return;
    const regressions = remainingRegressions(
      answers,
      (key, from, to) => ctx.clock.movedBetween(key as KeyName, from, to),
      (exchange, limit) => windowFor(ctx.options, exchange.bucket!, limit) * 1000,
      ctx.options.implementation.rateLimits.window,
      ctx.http.log.filter((exchange) => exchange.bucket !== undefined),
    );
    if (regressions.length > 0) {
      const { earlier, later, why } = regressions[0]!;
      fail({
        clause: 'RL-HEADERS',
        message: `${regressions.length} pair(s) of answers of one key do not count down: ${why}`,
        expected: 'RateLimit-Remaining one lower after each counted request of the window, never higher until the window resets',
        received: `${headerLine(earlier)} then ${headerLine(later)}`,
        fix: 'Send the requests left in the active window after counting this one; start over only when the window resets.',
        exchanges: [earlier, later],
      });
    }
  },
});

function judgeReset(ctx: CheckContext, answers: readonly Exchange[]): void {
  const tooLong = answers.filter((exchange) => {
    const values = advertised(exchange);
    return values !== undefined && values.reset > windowFor(ctx.options, exchange.bucket!, values.limit) + 1;
  });
  if (tooLong.length === 0) return;
  const first = tooLong[0]!;
  const values = advertised(first)!;
  const window = windowFor(ctx.options, first.bucket!, values.limit);
  fail({
    clause: 'RL-HEADERS',
    message: `${tooLong.length} answers announce a RateLimit-Reset longer than their window: ${values.reset} s for a limit of ${values.limit}, whose window is ${window} s`,
    expected: `RateLimit-Reset of at most ${window} s: the seconds until the active window resets`,
    received: headerLine(first),
    fix: 'Send the seconds left until the active window resets (not a Unix time, not the window length of another window).',
    exchanges: tooLong.slice(0, 2),
  });
}

function headerLine(exchange: Exchange): string {
  return `#${exchange.seq} ${exchange.status}: ${NAMES.map((n) => `${n}=${exchange.responseHeaders[n] ?? '(absent)'}`).join(' ')}`;
}
