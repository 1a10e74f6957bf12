import { ALL, defineCheck } from '../../check.ts';
import { fail } from '../../outcome.ts';

export default defineCheck({
  id: 'rate-limits.retry-after-only-on-429',
  title: 'Retry-After appears on 429 answers only',
  asserts: 'Retry-After appears on 429 answers (and 503s, where HTTP gives it the same meaning) and on no other answer.',
  clauses: ['RL-RETRY-AFTER-ONLY-429'],
  profiles: ALL,
  phase: 'passive',
  async run(ctx) {
    // 503 may carry it too: HTTP gives it the same meaning there (RFC 9110 §10.2.3),
    // and the contract sends it on 503 service_unavailable.
    const offenders = ctx.http.log.filter((e) => e.responseHeaders['retry-after'] !== undefined && e.status !== 429 && e.status !== 503);
    if (offenders.length > 0) {
      fail({
        clause: 'RL-RETRY-AFTER-ONLY-429',
        message: `${offenders.length} answers other than 429 carry Retry-After (statuses ${[...new Set(offenders.map((e) => e.status))].join(', ')})`,
        expected: 'no Retry-After outside 429',
        received: `Retry-After: ${offenders[0]!.responseHeaders['retry-after']}`,
        fix: 'Send Retry-After only when refusing with 429.',
        exchanges: offenders.slice(0, 3),
      });
    }
  },
});
