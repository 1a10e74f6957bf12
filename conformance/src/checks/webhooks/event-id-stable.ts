import { defineCheck, STATEFUL } from '../../check.ts';
import { arrivals, bodyOf, describeDelivery, retried } from '../../observe/arrivals.ts';
import { fail, skip } from '../../outcome.ts';

const EVENT_ID = /^evt_[0-9a-f]{32}$/;

export default defineCheck({
  id: 'webhooks.event-id-stable',
  title: 'A retried event keeps its X-Service-Event-Id',
  asserts: 'Every attempt of one event carries the same X-Service-Event-Id, and events of different jobs carry different ones.',
  clauses: ['WH-EVENT-ID'],
  decisions: ['ND-ENVELOPE'],
  profiles: STATEFUL,
  needs: ['receiver'],
  async run(ctx) {
    const { job, deliveries } = await retried(ctx);
    if (deliveries.length < 2) skip('no retry arrived after the receiver answered 500 (see webhooks.retried-after-failure)');
    const ids = deliveries.map((d) => d.headers['x-service-event-id']);
    if (!ids[0] || ids.some((id) => id !== ids[0])) {
      fail({
        clause: 'WH-EVENT-ID',
        message: `the ${deliveries.length} deliveries of one event for ${job.label} carry different event IDs`,
        expected: 'one X-Service-Event-Id for every copy of an event',
        received: ids.map((id) => id ?? '(absent)').join(', '),
        fix: 'Derive the event ID from the resource ID and the event type and send the same one on every attempt.',
        evidence: deliveries.slice(0, 2).map(describeDelivery),
      });
    }
    // Distinct events have distinct IDs.
    const others = (await arrivals(ctx)).filter((a) => a.job !== job && a.deliveries.length > 0);
    const clash = others.find((a) => a.deliveries[0]!.headers['x-service-event-id'] === ids[0]);
    if (clash) fail({ clause: 'WH-EVENT-ID', message: `${clash.job.label} and ${job.label} share the event ID ${ids[0]}`, expected: 'one ID per resource and event type', received: String(ids[0]) });
    if (!ctx.contract) return;
    for (const delivery of deliveries) {
      const header = delivery.headers['x-service-event-id'];
      if (!header || !EVENT_ID.test(header) || bodyOf(delivery)?.id !== header) {
        fail({ clause: 'ND-ENVELOPE', message: 'the event ID is not evt_ + 32 hex digits equal to the body\'s id', expected: 'X-Service-Event-Id = body.id = evt_<32 hex>', received: `${header} / ${String(bodyOf(delivery)?.id)}`, evidence: [describeDelivery(delivery)] });
      }
    }
  },
});
