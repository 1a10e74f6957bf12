import { compatHeadersAgree, describeCompatPairs } from '../../observe/rate-limit-headers.ts';
import { fail, notApplicable } from '../../outcome.ts';
import { defineProxyCheck, describe, fromService } from '../check.ts';

export default defineProxyCheck({
  id: 'service.compat-headers-agree',
  title: 'X-RateLimit-* repeat the RateLimit-* values',
  asserts: 'On every answer of the service to a rate-limited operation, X-RateLimit-Limit, -Remaining and -Reset say exactly what RateLimit-Limit, -Remaining and -Reset say (absent together or equal).',
  party: 'service',
  clauses: ['RL-HEADERS-COMPAT'],
  run({ traffic }) {
    const answers = fromService(traffic).filter((seen) => seen.bucket !== undefined && seen.key !== undefined);
    if (answers.length === 0) notApplicable('the service answered no request of a key on a rate-limited operation');
    const offenders = answers.filter((seen) => !compatHeadersAgree(seen.responseHeaders));
    if (offenders.length === 0) return;
    const first = offenders[0]!;
    fail({
      clause: 'RL-HEADERS-COMPAT',
      message: `${offenders.length} of ${answers.length} answers have X-RateLimit-* values that differ from RateLimit-*`,
      expected: 'equal pairs',
      received: describeCompatPairs(first.responseHeaders),
      fix: 'Send the X-RateLimit-* headers with exactly the RateLimit-* values.',
      evidence: offenders.slice(0, 2).map(describe),
    });
  },
});
