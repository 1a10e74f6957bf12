import { defineCheck, fail, STATEFUL } from '../../check.ts';
import { PrerequisiteError, skip } from '../../context.ts';
import { balanceOf, statusOf } from '../../world.ts';
import { chargedFor, show } from './ledger.ts';

export default defineCheck({
  id: 'credits.webhook-failures-change-nothing',
  title: 'Failing webhook deliveries change neither the job state nor its charge',
  clauses: ['CR-WEBHOOK-INDEPENDENT'],
  decisions: ['ND-ME'],
  profiles: STATEFUL,
  needs: ['receiver'],
  async run(ctx) {
    const job = await ctx.world.kickoffJob('photo-avatar');
    const record = await job.settled;
    if (!job.webhookUrl) throw new PrerequisiteError('the photo avatar has no webhook');
    // Its receiver answers 500 to every attempt; wait for a first one and, if it comes
    // in time, a retry.
    const attempts = await ctx.receiver!.waitFor(job.label, 2, (ctx.options.webhookFirstRetrySeconds * 1.2 + 2) * 1000);
    if (attempts.length === 0) skip('no delivery attempt arrived for the photo avatar (see webhooks.event-type-matches-state)');
    const exchange = await ctx.http.send({ key: 'main', method: 'GET', path: `/v1/avatars/${job.id}`, note: 'state after failed deliveries' });
    if (statusOf(exchange.json) !== record.status) {
      fail({ clause: 'CR-WEBHOOK-INDEPENDENT', message: `after ${attempts.length} failed deliveries avatar ${job.id} reads ${statusOf(exchange.json) ?? exchange.status}, not ${String(record.status)}`, expected: String(record.status), received: String(statusOf(exchange.json)), fix: 'Never let delivery outcomes touch the job.', exchanges: [exchange] });
    }
    const jobs = await ctx.world.allSettled();
    const before = balanceOf(ctx.world.snapshots.get('main:before'));
    const after = balanceOf(ctx.world.snapshots.get('main:after'));
    if (!before || !after) return;
    const charged = chargedFor(jobs, 'main');
    if (after.reserved !== before.reserved || (charged.known && after.used - before.used < charged.total)) {
      fail({
        clause: 'CR-WEBHOOK-INDEPENDENT',
        message: `with every job settled, the account shows ${after.used - before.used} credits used for ${charged.count} ready jobs costing ${charged.total}; one of them only ever had failing deliveries`,
        expected: `used up by at least ${charged.total}, reserved back to ${before.reserved}`,
        received: `before: ${show(before)}; after: ${show(after)}`,
        fix: 'Capture credits when the job is ready and release them when it fails, whatever happens to its webhook.',
      });
    }
  },
});
