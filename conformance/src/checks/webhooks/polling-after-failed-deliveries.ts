import { defineCheck, STATEFUL } from '../../check.ts';
import { attemptsDue } from '../../observe/arrivals.ts';
import { fail, PrerequisiteError, skip } from '../../outcome.ts';

export default defineCheck({
  id: 'webhooks.polling-after-failed-deliveries',
  title: 'When deliveries keep failing, polling still tells the final state',
  asserts: 'After several failed deliveries of an event, GET still answers 200 with the job\'s final state.',
  clauses: ['WH-GIVE-UP'],
  profiles: STATEFUL,
  needs: ['receiver'],
  // The always-failing receiver's second attempt, due by a moment the run's shared jobs
  // allow for (its avatar ends with theirs): a delivery more for its lateness.
  waits: (a) => a.delivery,
  async run(ctx) {
    const job = await ctx.world.kickoffJob('photo-avatar');
    const record = await job.settled;
    if (!job.webhookUrl) throw new PrerequisiteError('the photo avatar has no webhook');
    const attempts = await attemptsDue(ctx, job, 2);
    if (attempts.length < 2) skip(`only ${attempts.length} delivery attempt(s) arrived for the always-failing receiver (see webhooks.retried-after-failure)`);
    const exchange = await ctx.http.send({ key: 'main', method: 'GET', path: `/v1/avatars/${job.id}`, note: 'polling after failed deliveries' });
    const status = ctx.shape.state(exchange.json);
    const ended = ctx.shape.state(record);
    if (exchange.status !== 200 || status !== ended) {
      fail({
        clause: 'WH-GIVE-UP',
        message: `after ${attempts.length} failed deliveries, GET /v1/avatars/${job.id} answers ${status ?? exchange.status} instead of its final state ${String(ended)}`,
        expected: `200 with status ${String(ended)}`,
        received: `${exchange.status}${status ? ` with status ${status}` : ''}`,
        fix: 'Keep serving the final state on GET whatever happens to the deliveries.',
        exchanges: [exchange],
      });
    }
  },
});
