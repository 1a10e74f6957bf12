import { defineCheck, fail, STATEFUL } from '../../check.ts';
import { skip } from '../../context.ts';
import { arrivals, bodyOf, describeDelivery } from './arrivals.ts';

export default defineCheck({
  id: 'webhooks.event-type-matches-state',
  title: 'Reaching ready or failed sends the matching event (avatar.ready, avatar.failed, avatar_video.ready, avatar_video.failed)',
  clauses: ['WH-TERMINAL'],
  profiles: STATEFUL,
  needs: ['receiver'],
  async run(ctx) {
    const all = await arrivals(ctx);
    if (all.length === 0) skip('no job of the run with a webhook reached a terminal state');
    const seen = new Set<string>();
    for (const { job, deliveries } of all) {
      const expected = `${job.kind}.${String(job.terminal?.status)}`;
      if (deliveries.length === 0) {
        fail({
          clause: 'WH-TERMINAL',
          message: `${job.label} ${job.id} reached ${String(job.terminal?.status)} but no ${expected} event arrived within ${ctx.options.webhookRetryTimeoutSeconds} s`,
          expected: `a POST to its webhook_url with type ${expected}`,
          received: 'nothing',
          fix: 'Send one event when a job with webhook_url reaches ready or failed.',
          exchanges: [job.create],
        });
      }
      const type = bodyOf(deliveries[0]!)?.type;
      if (type !== expected) {
        fail({ clause: 'WH-TERMINAL', message: `${job.label} ${job.id} ended ${String(job.terminal?.status)} but its event is ${JSON.stringify(type)}`, expected, received: String(type), fix: 'Name the event after the resource and the state it reached.', evidence: [describeDelivery(deliveries[0]!)] });
      }
      seen.add(expected);
    }
    ctx.note(`event types seen: ${[...seen].join(', ')}`);
  },
});
