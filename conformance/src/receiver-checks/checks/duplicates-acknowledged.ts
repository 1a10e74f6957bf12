import { AVATAR_READY, defineReceiverCheck, expectAccepted } from '../check.ts';

/** The first attempt was signed this long ago, at most half the tolerance: its retry is signed now. */
const FIRST_ATTEMPT_AGO_SECONDS = 5;

export default defineReceiverCheck({
  id: 'receiver.duplicates-acknowledged',
  title: 'The same event delivered again, or retried later, is acknowledged',
  asserts:
    'A new event is answered 2xx; the same delivery sent again byte for byte is answered 2xx too, and so is the same event sent once more as a retry (same event ID and body, a later timestamp and its new signature).',
  clauses: ['WH-DUPLICATES'],
  deliveries: 3,
  async run(ctx) {
    const event = ctx.events.make(AVATAR_READY);
    const first = ctx.sender.nowSeconds() - Math.min(FIRST_ATTEMPT_AGO_SECONDS, Math.floor(ctx.toleranceSeconds / 2));
    const fix = 'keep the IDs of processed events and answer 2xx to an event already processed, without handling it again';
    const why = 'the source lets the sender deliver an event more than once, and a non-2xx answer makes it deliver again';
    const original = await ctx.deliver(event, { label: 'a valid event', timestamp: first });
    expectAccepted(original, 'WH-DUPLICATES', 'an authentic, fresh event must be acknowledged', fix);
    expectAccepted(await ctx.resend(original.delivery, 'the same delivery again'), 'WH-DUPLICATES', why, fix);
    expectAccepted(await ctx.deliver(event, { label: 'the same event retried later (same ID, new timestamp and signature)' }), 'WH-DUPLICATES', why, fix);
  },
});
