import { fail, notApplicable } from '../../outcome.ts';
import { defineProxyCheck, describeDelivery, eventObject } from '../check.ts';

export default defineProxyCheck({
  id: 'service.webhook-event-type',
  title: 'A webhook\'s type names the resource and the terminal state it carries',
  asserts: 'Every delivery\'s type (where the implementation profile says events carry it) is avatar.ready, avatar.failed, avatar_video.ready or avatar_video.failed, matching the kind of record at data.object (as its create answered) and its state.',
  party: 'service',
  clauses: ['WH-TERMINAL'],
  run({ traffic, shape }) {
    let judged = 0;
    for (const delivery of traffic.deliveries) {
      const object = eventObject(delivery);
      const job = traffic.created.find((created) => created.id === object?.id);
      const terminal = shape.terminal(shape.state(object));
      if (!job || !terminal) continue;
      judged++;
      const type = shape.eventType(delivery);
      const expected = `${job.kind}.${terminal}`;
      if (type === expected) continue;
      fail({
        clause: 'WH-TERMINAL',
        message: `webhook #${delivery.seq} for ${job.kind} ${job.id}, which it shows ${terminal}, has the type ${JSON.stringify(type)}`,
        expected,
        received: String(type),
        fix: 'Send the event named after the resource and the state it reached: avatar.ready, avatar.failed, avatar_video.ready or avatar_video.failed.',
        evidence: [describeDelivery(delivery)],
      });
    }
    if (judged === 0) notApplicable('no webhook carried a terminal record of a job made through the proxy');
  },
});
