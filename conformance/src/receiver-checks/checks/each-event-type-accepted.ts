import { defineReceiverCheck, expectAccepted } from '../check.ts';
import { EVENT_TYPES } from '../events.ts';

export default defineReceiverCheck({
  id: 'receiver.each-event-type-accepted',
  title: 'A valid event of each type is acknowledged',
  asserts:
    'One new event of each type the source defines (avatar.ready, avatar.failed, avatar_video.ready, avatar_video.failed), built from the contract\'s examples, signed now with the signing secret and sent as the sender sends it, is answered 2xx.',
  clauses: ['WH-RECEIVER-VERIFY'],
  deliveries: EVENT_TYPES.length,
  async run(ctx) {
    for (const type of EVENT_TYPES) {
      const event = ctx.events.make(type);
      expectAccepted(
        await ctx.deliver(event, { label: `a valid ${type} event` }),
        'WH-RECEIVER-VERIFY',
        'an authentic, fresh event must be acknowledged, or the sender retries it and finally gives it up',
        'verify with the signing secret the sender uses, over the exact bytes received, and answer 2xx to every event type, known or not',
      );
    }
  },
});
