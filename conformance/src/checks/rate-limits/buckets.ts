import { defineCheck, STATEFUL } from '../../check.ts';
import { describe } from '../../expect.ts';
import { isJson } from '../../world.ts';
import { exhaust, REFUSAL_TRIES, refusalCreates, refusedBelowOwnLimit, whileRefused } from '../../observe/exhaustion.ts';
import { fail, skip } from '../../outcome.ts';
import { bucketLimitsText } from '../../../../contract/numbers.ts';

export default defineCheck({
  id: 'rate-limits.buckets',
  title: 'Reads and generation requests have separate buckets with the documented limits',
  asserts: 'Reads and generation requests count against separate buckets: a key with its generation window used up still reads; each bucket advertises one of its expected limits (the minute\'s or the day\'s).',
  clauses: ['RL-BUCKETS'],
  decisions: ['ND-ME'],
  profiles: STATEFUL,
  shares: ['exhaustion'],
  // Its own refusals after the shared one, one a try.
  creates: (options) => ({ avatar: REFUSAL_TRIES * refusalCreates(options).avatar }),
  // A fresh window awaited between tries, when a window reopened during one.
  waits: (a) => (REFUSAL_TRIES - 1) * a.window,
  phase: 'exhaust',
  async run(ctx) {
    const expected = ctx.options.expectedLimits;
    // The limits every answer advertised, per bucket.
    for (const exchange of ctx.http.log) {
      const limit = exchange.responseHeaders['ratelimit-limit'];
      if (!exchange.bucket || limit === undefined || !/^\d+$/.test(limit.trim())) continue;
      const allowed = expected[exchange.bucket];
      if (!allowed.includes(Number(limit))) {
        fail({
          clause: 'RL-BUCKETS',
          message: `a ${exchange.bucket} request advertised RateLimit-Limit ${limit}`,
          expected: `one of ${allowed.join(', ')} (per minute, per day)`,
          received: limit,
          fix: `Give the ${exchange.bucket} bucket its documented limits; reads: ${bucketLimitsText('read')}, generation: ${bucketLimitsText('generation')}.`,
          exchanges: [exchange],
        });
      }
    }
    if (ctx.contract) {
      const me = ctx.http.log.find((e) => e.path === '/v1/me' && e.status === 200 && e.key === 'main');
      const limits = isJson(me?.json) && isJson(me.json.rate_limits) ? me.json.rate_limits : undefined;
      for (const bucket of ['read', 'generation'] as const) {
        const windows = limits && isJson(limits[bucket]) ? limits[bucket] : undefined;
        const minute = windows && isJson(windows.minute) ? windows.minute.limit : undefined;
        const day = windows && isJson(windows.day) ? windows.day.limit : undefined;
        if (!expected[bucket].includes(minute as number) || !expected[bucket].includes(day as number)) {
          fail({ clause: 'RL-BUCKETS', message: `GET /v1/me shows ${bucket} limits ${String(minute)}/minute and ${String(day)}/day`, expected: expected[bucket].join(' and '), received: `${String(minute)} and ${String(day)}`, fix: 'Show the key\'s real windows in rate_limits.', ...(me ? { exchanges: [me] } : {}) });
        }
      }
    }
    // A key over its generation limit can still read.
    if (!(await exhaust(ctx)).refused) skip('no key could be taken over its generation limit (see rate-limits.over-limit-429)');
    // A read refused after few reads is no read window's doing.
    const observed = await whileRefused(ctx, (exhaustion) => ctx.http.send({ key: exhaustion.key, method: 'GET', path: '/v1/me', on429: 'return', note: 'a read while generation is used up' }), { standsAlone: (read) => refusedBelowOwnLimit(ctx, read) });
    if (!observed.held) skip(observed.reason);
    const { held, result: read } = observed;
    if (read.status === 429) {
      fail({ clause: 'RL-BUCKETS', message: `a read was refused because the ${held.key} key had used up its generation window`, expected: '200: reads have their own bucket', received: describe(read), fix: 'Count GET requests in the read bucket only.', exchanges: [held.refused, read] });
    }
  },
});
