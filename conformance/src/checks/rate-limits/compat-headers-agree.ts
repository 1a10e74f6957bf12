import { ALL, defineCheck } from '../../check.ts';
import { compatHeadersAgree, describeCompatPairs, limitedAnswers } from '../../observe/rate-limit-headers.ts';
import { fail } from '../../outcome.ts';

export default defineCheck({
  id: 'rate-limits.compat-headers-agree',
  title: 'X-RateLimit-* repeat the RateLimit-* values',
  asserts: 'On every answer that carries them, X-RateLimit-Limit, -Remaining and -Reset say exactly what RateLimit-Limit, -Remaining and -Reset say (absent together or equal).',
  clauses: ['RL-HEADERS-COMPAT'],
  profiles: ALL,
  phase: 'passive',
  async run(ctx) {
    const answers = limitedAnswers(ctx.http.log);
    const offenders = answers.filter((e) => !compatHeadersAgree(e.responseHeaders));
    if (offenders.length > 0) {
      const first = offenders[0]!;
      fail({
        clause: 'RL-HEADERS-COMPAT',
        message: `${offenders.length} of ${answers.length} answers have X-RateLimit-* values that differ from RateLimit-*`,
        expected: 'equal pairs',
        received: describeCompatPairs(first.responseHeaders),
        fix: 'Send the X-RateLimit-* headers with exactly the RateLimit-* values (seconds, not a Unix time, for Reset).',
        exchanges: offenders.slice(0, 3),
      });
    }
  },
});
