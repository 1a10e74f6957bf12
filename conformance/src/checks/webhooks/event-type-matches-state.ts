import { defineCheck, STATEFUL } from '../../check.ts';
import { arrivals, bodyOf, describeDelivery } from '../../observe/arrivals.ts';
import { fail, skip } from '../../outcome.ts';

export default defineCheck({
  id: 'webhooks.event-type-matches-state',
  title: 'Reaching ready or failed sends the matching event (avatar.ready, avatar.failed, avatar_video.ready, avatar_video.failed)',
  asserts: 'Each job with a webhook_url that reached a terminal state sends an event whose type, read where the implementation puts it, is <avatar|avatar_video>.<ready|failed> for the state it reached.',
  clauses: ['WH-TERMINAL'],
  profiles: STATEFUL,
  needs: ['receiver'],
  async run(ctx) {
    const all = await arrivals(ctx);
    if (all.length === 0) skip('no job of the run with a webhook reached a terminal state');
    const seen = new Set<string>();
    for (const { job, deliveries } of all) {
      const expected = `${job.kind}.${String(job.ended)}`;
      const ended = String(ctx.shape.state(job.terminal));
      if (deliveries.length === 0) {
        fail({
          clause: 'WH-TERMINAL',
          message: `${job.label} ${job.id} reached ${ended} but no ${expected} event arrived within ${ctx.options.webhookRetryTimeoutSeconds} s of the read that saw it end`,
          expected: `a POST to its webhook_url with type ${expected}`,
          received: 'nothing',
          fix: 'Send one event when a job with webhook_url reaches ready or failed.',
          exchanges: [job.create],
        });
      }
      const type = ctx.shape.eventType(deliveries[0]!);
      if (type !== expected) {
        fail({ clause: 'WH-TERMINAL', message: `${job.label} ${job.id} ended ${ended} but its event (${ctx.shape.describeEventType()}) is ${JSON.stringify(type)}`, expected, received: String(type), fix: 'Name the event after the resource and the state it reached.', evidence: [describeDelivery(deliveries[0]!)] });
      }
      seen.add(expected);
    }
    ctx.note(`event types seen: ${[...seen].join(', ')}`);
  },
});
