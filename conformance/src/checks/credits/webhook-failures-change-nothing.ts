import { attemptsDue } from '../../observe/arrivals.ts';
import { defineCheck, STATEFUL } from '../../check.ts';
import { chargedFor, show } from '../../observe/ledger.ts';
import { fail, PrerequisiteError, skip } from '../../outcome.ts';

export default defineCheck({
  id: 'credits.webhook-failures-change-nothing',
  title: 'Failing webhook deliveries change neither the job state nor its charge',
  asserts: 'An avatar whose every delivery is answered 500 keeps the final state it reached, and (where /v1/me shows balances) the account is charged for every ready job and holds nothing reserved once all jobs are done.',
  clauses: ['CR-WEBHOOK-INDEPENDENT'],
  decisions: ['ND-ME'],
  profiles: STATEFUL,
  needs: ['receiver'],
  // The second attempt of the failing delivery, due by a moment the run's shared jobs
  // allow for (its avatar ends with theirs): a delivery more for its lateness.
  waits: (a) => a.delivery,
  async run(ctx) {
    const job = await ctx.world.kickoffJob('photo-avatar');
    const record = await job.settled;
    if (!job.webhookUrl) throw new PrerequisiteError('the photo avatar has no webhook');
    // Its receiver answers 500 to every attempt; wait for a first one and, if it comes
    // in time, a retry.
    const attempts = await attemptsDue(ctx, job, 2);
    if (attempts.length === 0) skip('no delivery attempt arrived for the photo avatar (see webhooks.event-type-matches-state)');
    const exchange = await ctx.http.send({ key: 'main', method: 'GET', path: `/v1/avatars/${job.id}`, note: 'state after failed deliveries' });
    const ended = ctx.shape.state(record);
    const now = ctx.shape.state(exchange.json);
    if (now !== ended) {
      fail({ clause: 'CR-WEBHOOK-INDEPENDENT', message: `after ${attempts.length} failed deliveries avatar ${job.id} reads ${now ?? exchange.status}, not ${String(ended)}`, expected: String(ended), received: String(now), fix: 'Never let delivery outcomes touch the job.', exchanges: [exchange] });
    }
    const jobs = await ctx.world.allSettled();
    const before = ctx.shape.balance(ctx.world.snapshots.get('main:before'));
    const after = ctx.shape.balance(ctx.world.snapshots.get('main:after'));
    if (!before || !after) return;
    const charged = chargedFor(ctx.shape, jobs, 'main');
    const spent = (member: 'available' | 'used') => {
      const [from, to] = [before[member], after[member]];
      if (from === undefined || to === undefined) return undefined;
      return member === 'used' ? to - from : from - to;
    };
    // Each member where shown: nothing held once all is settled, every ready job paid for.
    const short = (['used', 'available'] as const).find((member) => charged.known && (spent(member) ?? Infinity) < charged.total);
    if ((after.reserved !== undefined && after.reserved !== before.reserved) || short) {
      fail({
        clause: 'CR-WEBHOOK-INDEPENDENT',
        message: `with every job settled, the account shows ${short ? `${spent(short)} credits ${short === 'used' ? 'used' : 'spent'}` : `${after.reserved} credits still reserved`} for ${charged.count} ready jobs costing ${charged.total}; one of them only ever had failing deliveries`,
        expected: [before.used !== undefined ? `used up by at least ${charged.total}` : '', before.available !== undefined ? `available down by at least ${charged.total}` : '', before.reserved !== undefined ? `reserved back to ${before.reserved}` : ''].filter(Boolean).join(', '),
        received: `before: ${show(before)}; after: ${show(after)}`,
        fix: 'Capture credits when the job is ready and release them when it fails, whatever happens to its webhook.',
      });
    }
  },
});
