import { AVATAR_READY, defineReceiverCheck, expectAccepted, expectRefused } from '../check.ts';

/**
 * How much further than the tolerance a stale timestamp lies: the runner's clock and
 * the receiver's may differ by some seconds, and a receiver must not fail for that.
 */
const CLOCK_SKEW_MARGIN_SECONDS = 60;
/** A day beyond the tolerance: no clock is that far off, so such a timestamp is a replay kept for later. */
const FAR_FUTURE_SECONDS = 86_400;

export default defineReceiverCheck({
  id: 'receiver.timestamp-checked',
  title: 'A delivery signed too long ago, or for the far future, is refused',
  asserts:
    'A correctly signed delivery whose timestamp is older than the receiver\'s tolerance (--tolerance, default 300 s, plus a minute for clock skew) is answered with a non-2xx status, and so is one stamped a day beyond the tolerance in the future; the same event stamped now is then answered 2xx.',
  clauses: ['WH-RECEIVER-VERIFY'],
  decisions: ['ND-TIMESTAMP-AGE'],
  deliveries: 3,
  async run(ctx) {
    const event = ctx.events.make(AVATAR_READY);
    const now = ctx.sender.nowSeconds();
    const tolerance = ctx.toleranceSeconds;
    const header = ctx.profile.webhookFormat.headers.timestamp;
    const stale = tolerance + CLOCK_SKEW_MARGIN_SECONDS;
    expectRefused(
      await ctx.deliver(event, { label: `the event signed ${stale} s ago`, timestamp: now - stale }),
      'WH-RECEIVER-VERIFY',
      `a signature is proof of the sender only at its time: accepted ${stale} s later, a captured delivery can be replayed (if the receiver allows more than ${tolerance} s, say so with --tolerance)`,
      `refuse a delivery whose ${header} is more than ${tolerance} s behind the receiver's clock, after the signature (which covers the timestamp) verifies`,
    );
    const ahead = tolerance + FAR_FUTURE_SECONDS;
    expectRefused(
      await ctx.deliver(event, { label: `the event signed for ${ahead} s in the future`, timestamp: now + ahead }),
      'WH-RECEIVER-VERIFY',
      'a timestamp far ahead keeps a delivery fresh until then, so a captured one could be replayed all that time',
      `refuse a delivery whose ${header} is more than ${tolerance} s ahead of the receiver's clock`,
    );
    expectAccepted(
      await ctx.deliver(event, { label: 'the same event signed now, after those', timestamp: now }),
      'WH-RECEIVER-VERIFY',
      'a timestamp of the present must be accepted',
      `compare ${header} with the receiver's own clock in seconds, within ${tolerance} s either way`,
    );
  },
});
