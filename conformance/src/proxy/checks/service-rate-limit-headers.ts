import { advertised, remainingRegressions } from '../../observe/rate-limit-headers.ts';
import { fail, notApplicable } from '../../outcome.ts';
import { asExchange, defineProxyCheck, describe, fromService } from '../check.ts';
import type { Seen } from '../traffic.ts';

const NAMES = ['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset'];

export default defineProxyCheck({
  id: 'service.rate-limit-headers',
  title: 'Successes and 429s carry RateLimit headers that describe the key\'s window',
  asserts:
    'Every success and every 429 the service gave a key on a rate-limited operation carries RateLimit-Limit, -Remaining and -Reset as non-negative integers; Remaining never exceeds Limit; Reset is no longer than the window of the limit; and between two answers of one key and bucket that describe the same window, Remaining goes down with each counted request and never up (the runner\'s own rule, rate-limits.headers-on-answers).',
  party: 'service',
  clauses: ['RL-HEADERS'],
  run({ traffic, windowFor, shape }) {
    const answers = fromService(traffic).filter((seen) => seen.key !== undefined && seen.bucket !== undefined && ((seen.status >= 200 && seen.status < 300) || seen.status === 429));
    if (answers.length === 0) notApplicable('the service answered no request of a key on a rate-limited operation with a success or a 429');
    const fix = 'Send the three RateLimit headers of the key\'s active window on every success and every 429, counting each request.';
    const line = (seen: Seen) => `#${seen.seq} ${seen.status}: ${NAMES.map((n) => `${n}=${seen.responseHeaders[n] ?? '(absent)'}`).join(' ')}`;
    const missing = answers.filter((seen) => advertised(asExchange(seen)) === undefined);
    if (missing.length > 0) {
      fail({ clause: 'RL-HEADERS', message: `${missing.length} of ${answers.length} successes and 429s lack a RateLimit header (or it is not a non-negative integer)`, expected: NAMES.map((n) => `${n}: <integer>`).join(', '), received: line(missing[0]!), fix, evidence: missing.slice(0, 2).map(describe) });
    }
    const overfull = answers.filter((seen) => Number(seen.responseHeaders['ratelimit-remaining']) > Number(seen.responseHeaders['ratelimit-limit']));
    if (overfull.length > 0) {
      fail({ clause: 'RL-HEADERS', message: `${overfull.length} answers show more requests remaining than the limit`, expected: 'RateLimit-Remaining <= RateLimit-Limit', received: line(overfull[0]!), fix, evidence: overfull.slice(0, 2).map(describe) });
    }
    const tooLong = answers.filter((seen) => {
      const values = advertised(asExchange(seen))!;
      return values.reset > windowFor(seen.bucket!, values.limit) + 1;
    });
    if (tooLong.length > 0) {
      const values = advertised(asExchange(tooLong[0]!))!;
      fail({ clause: 'RL-HEADERS', message: `${tooLong.length} answers announce a RateLimit-Reset longer than their window (${values.reset} s for a limit of ${values.limit})`, expected: `at most ${windowFor(tooLong[0]!.bucket!, values.limit)} s: the seconds until the window resets`, received: line(tooLong[0]!), fix, evidence: [describe(tooLong[0]!)] });
    }
    for (const key of new Set(answers.map((seen) => seen.key!))) {
      const own = answers.filter((seen) => seen.key === key);
      const byExchange = new Map(own.map((seen) => [seen.seq, seen]));
      // Every request of the key counts toward what a sliding log may let go, refusals and invalid requests too.
      const sent = fromService(traffic).filter((seen) => seen.key === key && seen.bucket !== undefined).map(asExchange);
      const regressions = remainingRegressions(own.map(asExchange), () => false, (exchange, limit) => windowFor(exchange.bucket!, limit) * 1000, shape.profile.rateLimits.window, sent);
      if (regressions.length === 0) continue;
      const { earlier, later, why } = regressions[0]!;
      fail({
        clause: 'RL-HEADERS',
        message: `${regressions.length} pair(s) of answers of ${key} do not count down: ${why}`,
        expected: 'RateLimit-Remaining one lower after each counted request of the window, never higher until the window resets',
        received: `${line(byExchange.get(earlier.seq)!)} then ${line(byExchange.get(later.seq)!)}`,
        fix: 'Send the requests left in the active window after counting this one; start over only when the window resets.',
        evidence: [describe(byExchange.get(earlier.seq)!), describe(byExchange.get(later.seq)!)],
      });
    }
  },
});
