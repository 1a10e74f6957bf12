import { ALL, defineCheck, fail } from '../../check.ts';
import type { Exchange } from '../../http.ts';

const NAMES = ['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset'];

/** Answers that must describe the key's window: successes and 429s of the API's own keys. */
export function limitedAnswers(log: readonly Exchange[]): Exchange[] {
  return log.filter(
    (e) => e.bucket !== undefined && (e.key === 'main' || e.key === 'second' || e.key === 'empty') && ((e.status >= 200 && e.status < 300) || e.status === 429),
  );
}

export default defineCheck({
  id: 'rate-limits.headers-on-answers',
  title: 'Successes and 429s carry RateLimit-Limit, -Remaining and -Reset',
  clauses: ['RL-HEADERS'],
  profiles: ALL,
  phase: 'passive',
  async run(ctx) {
    const answers = limitedAnswers(ctx.http.log);
    if (answers.length === 0) fail({ clause: 'RL-HEADERS', message: 'no successful or 429 answer was recorded to inspect' });
    const bad = answers.filter((e) => NAMES.some((name) => !/^\s*\d+\s*$/.test(e.responseHeaders[name] ?? '')));
    const inconsistent = answers.filter((e) => Number(e.responseHeaders['ratelimit-remaining']) > Number(e.responseHeaders['ratelimit-limit']));
    const offenders = [...bad, ...inconsistent];
    if (offenders.length > 0) {
      const first = offenders[0]!;
      fail({
        clause: 'RL-HEADERS',
        message: `${bad.length} of ${answers.length} successful or 429 answers lack a RateLimit header (or it is not a non-negative integer)${inconsistent.length ? `; ${inconsistent.length} show more remaining than the limit` : ''}`,
        expected: NAMES.map((n) => `${n}: <integer>`).join(', '),
        received: NAMES.map((n) => `${n}: ${first.responseHeaders[n] ?? '(absent)'}`).join(', '),
        fix: 'Add the three RateLimit headers of the active window to every success and every 429.',
        exchanges: offenders.slice(0, 3),
      });
    }
  },
});
