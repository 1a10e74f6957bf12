import { retryAfterSeconds } from '../../../../client/src/index.ts';
import { fail, notApplicable } from '../../outcome.ts';
import { defineProxyCheck, describe, ms, TIMING_MARGIN_MS } from '../check.ts';
import type { Seen } from '../traffic.ts';

export default defineProxyCheck({
  id: 'client.waits-retry-after',
  title: 'After a 429 the client sends nothing to that bucket before Retry-After has passed',
  asserts:
    'After any 429 with a Retry-After (the service\'s, or one the proxy answered with --inject-429), the key that got it sends no request to the same rate-limit bucket until that many seconds have passed since the answer went out; requests to the other bucket are free to go.',
  party: 'client',
  clauses: ['RL-CLIENT-WAIT'],
  run({ traffic }) {
    const refusals = traffic.exchanges.filter((seen) => seen.key !== undefined && seen.bucket !== undefined && seen.status === 429);
    if (refusals.length === 0) {
      notApplicable('no request got a 429, so no wait after one could be seen; --inject-429 <share> answers a share of the requests with one');
    }
    let judged = 0;
    for (const refusal of refusals) {
      const seconds = retryAfterSeconds(new Headers(refusal.responseHeaders), refusal.answeredAt);
      if (seconds === undefined) continue;
      const after = traffic.exchanges.filter((seen) => seen.key === refusal.key && seen.bucket === refusal.bucket && seen.arrivedAt > refusal.answeredAt);
      if (after.length === 0) continue;
      judged++;
      const early = after.find((seen: Seen) => seen.arrivedAt < refusal.answeredAt + seconds * 1000 - TIMING_MARGIN_MS);
      if (!early) continue;
      fail({
        clause: 'RL-CLIENT-WAIT',
        message: `${refusal.key} got a 429 with Retry-After: ${refusal.responseHeaders['retry-after']} on ${refusal.method} ${refusal.path}, then sent ${early.method} ${early.path} to the same ${refusal.bucket} bucket ${ms(early.arrivedAt - refusal.answeredAt)} later`,
        expected: `no ${refusal.bucket} request of that key for ${seconds} s (Retry-After is in seconds)`,
        received: `the next ${refusal.bucket} request after ${ms(early.arrivedAt - refusal.answeredAt)}`,
        fix: 'Read Retry-After as a number of seconds (or an HTTP date) and wait at least that long before sending another request of that bucket; never retry a 429 at once or on a fixed short timer.',
        evidence: [describe(refusal), describe(early)],
      });
    }
    if (judged === 0) notApplicable(`${refusals.length === 1 ? 'the one 429' : `none of the ${refusals.length} 429s`} was followed by another request of that key to that bucket, so no wait could be judged`);
  },
});
