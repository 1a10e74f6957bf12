import { fail, notApplicable } from '../../outcome.ts';
import { asExchange, defineProxyCheck, describe, fromService } from '../check.ts';

export default defineProxyCheck({
  id: 'service.insufficient-credits-402',
  title: 'A 402 of the service says insufficient_credits',
  asserts: 'Every 402 the service answered carries the code insufficient_credits where the implementation profile says errors carry it (a body member, a header, or the last segment of a type URI), as the source pairs the two (the runner\'s credits.insufficient-credits-402).',
  party: 'service',
  clauses: ['CR-402'],
  run({ traffic, shape }) {
    const refusals = fromService(traffic).filter((seen) => seen.status === 402);
    if (refusals.length === 0) notApplicable('the service refused no request with 402');
    // Read through the profile's lookup, as a service run does: a profile with its codes in a type URI or a header is judged where it puts them.
    const offenders = refusals.filter((seen) => !shape.carries(asExchange(seen), 'insufficient_credits'));
    if (offenders.length === 0) return;
    const first = offenders[0]!;
    fail({
      clause: 'CR-402',
      message: `${offenders.length} of ${refusals.length} answers 402 do not say insufficient_credits (the first: ${first.method} ${first.path}${shape.errorCode(asExchange(first)) === undefined ? '' : `, code ${shape.errorCode(asExchange(first))}`})`,
      expected: shape.describeErrorCode('insufficient_credits'),
      received: first.responseText.slice(0, 200) || '(no body)',
      fix: 'Refuse a generation request the account cannot pay for with 402 and the code insufficient_credits.',
      evidence: offenders.slice(0, 2).map(describe),
    });
  },
});
