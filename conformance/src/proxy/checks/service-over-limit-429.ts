import { fail, notApplicable } from '../../outcome.ts';
import { asExchange, defineProxyCheck, describe, fromService } from '../check.ts';

export default defineProxyCheck({
  id: 'service.over-limit-429',
  title: 'A 429 of the service says rate_limit_exceeded and carries Retry-After in seconds',
  asserts: 'Every 429 the service itself answered (not one the proxy injected) carries the code rate_limit_exceeded where the implementation profile says errors carry it, and Retry-After as a whole number of seconds.',
  party: 'service',
  clauses: ['RL-429'],
  run({ traffic, shape }) {
    const refusals = fromService(traffic).filter((seen) => seen.status === 429);
    if (refusals.length === 0) notApplicable('the service refused no request with 429 (the ones --inject-429 answered are the proxy\'s)');
    for (const seen of refusals) {
      const retryAfter = seen.responseHeaders['retry-after'];
      const seconds = retryAfter !== undefined && /^\s*\d+\s*$/.test(retryAfter);
      const coded = shape.carries(asExchange(seen), 'rate_limit_exceeded');
      if (seconds && coded) continue;
      fail({
        clause: 'RL-429',
        message: `a 429 of ${seen.method} ${seen.path} ${!seconds ? `carries ${retryAfter === undefined ? 'no Retry-After' : `Retry-After: ${retryAfter}, not a number of seconds`}` : 'does not say rate_limit_exceeded'}`,
        expected: `Retry-After: <seconds> and ${shape.describeErrorCode('rate_limit_exceeded')}`,
        received: `Retry-After: ${retryAfter ?? '(absent)'}; ${seen.responseText.slice(0, 200)}`,
        fix: 'Refuse with 429, the code rate_limit_exceeded and Retry-After: the whole seconds until the key\'s window admits again.',
        evidence: [describe(seen)],
      });
    }
  },
});
