import { isDeepStrictEqual } from 'node:util';
import { defineCheck, STATEFUL } from '../../check.ts';
import { arrivals, bodyOf, dataObject, describeDelivery } from '../../observe/arrivals.ts';
import { fail, skip } from '../../outcome.ts';

/** The contract's file links, signed as each leaves the service with its own expiry (ND-FILE-LINKS). */
const FILE_LINK_MEMBERS: ReadonlySet<string> = new Set(['preview_image_url', 'video_url', 'captions_url']);

/** A member as compared: a file link without its query, which carries the expiry and signature of the moment it was given. */
function linkless(key: string, value: unknown): unknown {
  return FILE_LINK_MEMBERS.has(key) && typeof value === 'string' ? value.split('?', 1)[0] : value;
}

export default defineCheck({
  id: 'webhooks.payload-matches-get',
  title: 'The event has a top-level id, and data.object is the record as GET returns it',
  asserts: 'Each event has a top-level id and carries at data.object the record as GET shows it once terminal: the same members, the same id, state and error (the contract: equal member for member, file links apart from their expiry and signature).',
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
      // The polled terminal record is what GET returns from then on (ST-TERMINAL). The
      // source asks for the same shape: the same members, and the same job (its id was
      // judged above against the create answer's) at the same end. Under the contract the
      // same serializer makes it equal member for member.
      const record = job.terminal!;
      const members = [...new Set([...Object.keys(record), ...Object.keys(object)])];
      const differing = ctx.contract
        ? members.filter((key) => !isDeepStrictEqual(linkless(key, object[key]), linkless(key, record[key])))
        : members.filter((key) => !(key in object) || !(key in record) || (key === 'error' && !isDeepStrictEqual(object[key], record[key])));
      const stateDiffers = ctx.shape.state(object) !== ctx.shape.state(record);
      if (!ctx.contract && stateDiffers) differing.push(`state at ${ctx.shape.profile.records.status}`);
      if (differing.length > 0) {
        const value = (from: Record<string, unknown>, key: string) => (key.startsWith('state at ') ? JSON.stringify(ctx.shape.state(from)) : key in from ? JSON.stringify(from[key]) : '(absent)');
        fail({
          clause: 'WH-PAYLOAD-SHAPE',
          message: `data.object of the ${String(ctx.shape.eventType(delivery))} event for ${job.id} differs from GET in ${differing.join(', ')}`,
          expected: differing.map((key) => `${key}: ${value(record, key)}`).join('; '),
          received: differing.map((key) => `${key}: ${value(object, key)}`).join('; '),
          fix,
          evidence: [describeDelivery(delivery)],
        });
      }
    }
  },
});
