import { isDeepStrictEqual } from 'node:util';
import { fail, notApplicable } from '../../outcome.ts';
import { defineProxyCheck, describeDelivery, eventObject, fromService, recordRead } from '../check.ts';

export default defineProxyCheck({
  id: 'service.webhook-payload-matches-get',
  title: 'A webhook has a top-level id, and data.object is the record as GET shows it',
  asserts:
    'Every delivery has a top-level id and the record at data.object; where a GET of that record showed the same state, the event\'s record has the same members and the same error (the runner\'s core rule, webhooks.payload-matches-get).',
  party: 'service',
  clauses: ['WH-PAYLOAD-SHAPE'],
  run({ traffic, shape }) {
    if (traffic.deliveries.length === 0) notApplicable('no webhook was delivered through the proxy');
    const fix = 'Send {id, …, data: {object}} where object is what GET returns for the resource once it is terminal (one serializer for both).';
    const reads = fromService(traffic).filter((seen) => recordRead(seen) !== undefined && seen.status >= 200 && seen.status < 300);
    let compared = 0;
    for (const delivery of traffic.deliveries) {
      const id = (delivery.json as { id?: unknown } | undefined)?.id;
      const object = eventObject(delivery);
      if (typeof id !== 'string' || id === '' || !object || typeof object.id !== 'string') {
        fail({ clause: 'WH-PAYLOAD-SHAPE', message: `webhook #${delivery.seq} lacks ${typeof id !== 'string' || id === '' ? 'a top-level id' : 'the record (with its id) at data.object'}`, expected: '{"id": …, "data": {"object": {"id": …}}}', received: delivery.rawBody.toString('utf8').slice(0, 200), fix, evidence: [describeDelivery(delivery)] });
      }
      const state = shape.state(object);
      const record = reads
        .map((seen) => seen.responseJson)
        .find((json): json is Record<string, unknown> => typeof json === 'object' && json !== null && (json as Record<string, unknown>).id === object.id && shape.state(json) === state);
      if (!record) continue;
      compared++;
      const members = [...new Set([...Object.keys(record), ...Object.keys(object)])];
      const differing = members.filter((key) => !(key in object) || !(key in record) || (key === 'error' && !isDeepStrictEqual(object[key], record[key])));
      if (differing.length === 0) continue;
      fail({
        clause: 'WH-PAYLOAD-SHAPE',
        message: `data.object of webhook #${delivery.seq} differs from GET of ${object.id} in ${differing.join(', ')}`,
        expected: differing.map((key) => `${key}: ${key in record ? JSON.stringify(record[key]) : '(absent)'}`).join('; '),
        received: differing.map((key) => `${key}: ${key in object ? JSON.stringify(object[key]) : '(absent)'}`).join('; '),
        fix,
        evidence: [describeDelivery(delivery)],
      });
    }
    if (compared === 0) notApplicable('no webhook\'s record was also read with GET in the same state, so the two could not be compared (the shape of each was checked)');
  },
});
