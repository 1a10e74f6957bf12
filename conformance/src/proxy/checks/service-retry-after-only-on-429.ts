import { fail, notApplicable } from '../../outcome.ts';
import { defineProxyCheck, describe, fromService } from '../check.ts';

export default defineProxyCheck({
  id: 'service.retry-after-only-on-429',
  title: 'Retry-After appears on 429 answers only',
  asserts: 'No answer of the service other than a 429 (or a 503, where HTTP gives it the same meaning) carries Retry-After.',
  party: 'service',
  clauses: ['RL-RETRY-AFTER-ONLY-429'],
  run({ traffic }) {
    const answers = fromService(traffic);
    if (answers.length === 0) notApplicable('the service answered nothing');
    const offenders = answers.filter((seen) => seen.responseHeaders['retry-after'] !== undefined && seen.status !== 429 && seen.status !== 503);
    if (offenders.length === 0) return;
    fail({
      clause: 'RL-RETRY-AFTER-ONLY-429',
      message: `${offenders.length} answers other than 429 carry Retry-After (statuses ${[...new Set(offenders.map((seen) => seen.status))].join(', ')})`,
      expected: 'no Retry-After outside 429',
      received: `Retry-After: ${offenders[0]!.responseHeaders['retry-after']}`,
      fix: 'Send Retry-After only when refusing with 429.',
      evidence: offenders.slice(0, 2).map(describe),
    });
  },
});
