import { isDeepStrictEqual } from 'node:util';
import { defineCheck, fail, STATEFUL } from '../../check.ts';
import { skip } from '../../context.ts';
import { arrivals, bodyOf, dataObject, describeDelivery } from './arrivals.ts';

export default defineCheck({
  id: 'webhooks.payload-matches-get',
  title: 'The event has a top-level id, and data.object is the record as GET returns it',
  clauses: ['WH-PAYLOAD-SHAPE'],
  profiles: STATEFUL,
  needs: ['receiver'],
  async run(ctx) {
    const all = (await arrivals(ctx)).filter((arrival) => arrival.deliveries.length > 0);
    if (all.length === 0) skip('no webhook arrived (see webhooks.event-type-matches-state)');
    for (const { job, deliveries } of all) {
      const delivery = deliveries[0]!;
      const body = bodyOf(delivery);
      const object = dataObject(delivery);
      const fix = 'Send {id, …, data: {object}} where object is what GET returns for the resource once it is terminal (one serializer for both).';
      if (!body || typeof body.id !== 'string' || !body.id) {
        fail({ clause: 'WH-PAYLOAD-SHAPE', message: `the event for ${job.label} has no top-level id`, expected: '"id": "<event id>"', received: delivery.rawBody.slice(0, 200), fix, evidence: [describeDelivery(delivery)] });
      }
      if (!object || object.id !== job.id) {
        fail({ clause: 'WH-PAYLOAD-SHAPE', message: `the event for ${job.label} does not carry the record at data.object`, expected: `data.object.id = ${job.id}`, received: object ? `data.object.id = ${JSON.stringify(object.id)}` : 'no data.object', fix, evidence: [describeDelivery(delivery)] });
      }
      // The polled terminal record is what GET returns from then on (ST-TERMINAL).
      const record = job.terminal!;
      if (!isDeepStrictEqual(object, record)) {
        const differing = [...new Set([...Object.keys(record), ...Object.keys(object)])].filter((key) => !isDeepStrictEqual(object[key], record[key]));
        fail({
          clause: 'WH-PAYLOAD-SHAPE',
          message: `data.object of the ${String(body.type)} event for ${job.id} differs from GET in ${differing.join(', ')}`,
          expected: differing.map((key) => `${key}: ${JSON.stringify(record[key])}`).join('; '),
          received: differing.map((key) => `${key}: ${JSON.stringify(object[key])}`).join('; '),
          fix,
          evidence: [describeDelivery(delivery)],
        });
      }
    }
  },
});
