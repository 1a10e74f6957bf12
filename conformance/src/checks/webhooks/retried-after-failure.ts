import { firstRetryLatestSeconds } from '../../options.ts';
import { formatNumber, WEBHOOK_DELIVERY } from '../../../../contract/numbers.ts';
import { WEBHOOK_TOLERANCE_SECONDS } from '../../../../contract/webhookSignature.ts';
import { defineCheck, STATEFUL } from '../../check.ts';
import { describeDelivery, heldBeforeReading, retried } from '../../observe/arrivals.ts';
import { fail, skip } from '../../outcome.ts';
import type { Delivery } from '../../receiver/server.ts';
import type { Stalls } from '../../stalls.ts';

const SAME_HEADERS = ['x-service-event-id', 'x-service-timestamp', 'x-service-signature'];

/**
 * The most the runner may have been stalled or busy between an attempt's stamp and its
 * receipt for its 2xx to count as one the sender surely got in time. The source leaves the
 * sender's timeout open ("a bounded timeout"): a runner held longer than this may have
 * answered after the sender gave up, and the attempt that follows is then a retry of an
 * attempt that, for the sender, failed (seen: a 200 read 7 s late by a loaded runner, a
 * sender with a 3 s timeout retrying).
 */
export const ANSWERED_IN_TIME_MS = 1000;

/** How long the runner was stalled or busy between a delivery's stamp and its receipt (ms): how late it may have answered. */
export function heldBeforeAnswer(stalls: Stalls, delivery: Delivery): number {
  return heldBeforeReading(stalls, delivery, WEBHOOK_TOLERANCE_SECONDS * 1000);
}

export default defineCheck({
  id: 'webhooks.retried-after-failure',
  title: 'A delivery answered 500 is retried after a delay, and not after success',
  asserts: 'A delivery answered 500 is attempted again after a pause, waits between attempts grow, and no attempt follows a 2xx. A copy of an attempt sent moments later (same event, timestamp and signature) is a duplicate the source allows, not a retry.',
  clauses: ['WH-RETRY'],
  decisions: ['ND-DELIVERY'],
  profiles: STATEFUL,
  needs: ['receiver'],
  // The retry itself is awaited with the run's shared jobs; then a pause of up to 2 s.
  waits: (a) => Math.min(2, a.options.webhookFirstRetrySeconds),
  async run(ctx) {
    const { job, deliveries } = await retried(ctx);
    if (deliveries.length === 0) skip('no delivery arrived at all (see webhooks.event-type-matches-state)');
    const [first, second] = deliveries;
    if (!second) {
      fail({
        clause: 'WH-RETRY',
        message: `the receiver answered 500 to the ${job.label} event and no retry came within ${Math.round(firstRetryLatestSeconds(ctx.options) + 1 + ctx.options.webhookRetryTimeoutSeconds)} s`,
        expected: 'a second attempt after a short delay',
        received: 'one attempt',
        fix: 'Retry failed deliveries a few times with exponential backoff.',
        evidence: [describeDelivery(first!)],
      });
    }
    // In the account's time, as a range: a sandbox clock moved in between counts.
    const gap = (a: { receivedAt: number }, b: { receivedAt: number }) => ctx.clock.gap('main', a.receivedAt, b.receivedAt);
    const delay = gap(first!, second);
    if (delay.longest < 0.2) {
      fail({ clause: 'WH-RETRY', message: `the retry came ${delay.longest.toFixed(2)} s after the failure: no backoff`, expected: 'a delay before retrying', received: `${delay.longest.toFixed(2)} s`, fix: 'Wait before retrying, longer each time.' });
    }
    // No attempt after one was acknowledged. A delivery that repeats an earlier one byte for
    // byte may be a copy the sender sent moments after it, received late on a stalled
    // runner: its 2xx is not one the sender's attempt got, and the retry may still come.
    const repeats = (d: Delivery, i: number) => deliveries.slice(0, i).some((e) => e.rawBody === d.rawBody && SAME_HEADERS.every((h) => e.headers[h] === d.headers[h]));
    // A 2xx the runner gave after being held a while may have come after the sender's timeout.
    const answeredInTime = (d: Delivery) => {
      const held = heldBeforeAnswer(ctx.stalls, d);
      if (held > ANSWERED_IN_TIME_MS) ctx.note(`the ${d.answered} to attempt ${d.seq} was given after the runner was held ${(held / 1000).toFixed(1)} s since its stamp: the sender may have timed out, so it is not taken as the acknowledgement`);
      return held <= ANSWERED_IN_TIME_MS;
    };
    const acknowledged = deliveries.findIndex((d, i) => d.answered >= 200 && d.answered < 300 && !repeats(d, i) && answeredInTime(d));
    if (acknowledged >= 0) {
      await ctx.sleep(Math.min(2000, ctx.options.webhookFirstRetrySeconds * 1000));
      const after = ctx.receiver!.attempts(job.label).slice(acknowledged + 1);
      if (after.length > 0) fail({ clause: 'WH-RETRY', message: `the event was sent again after the receiver acknowledged it with ${deliveries[acknowledged]!.answered}`, expected: 'no attempt after a 2xx', received: `${after.length} more`, fix: 'Any 2xx ends delivery.', evidence: after.slice(0, 1).map(describeDelivery) });
    }
    // Waits grow, where the always-failing receiver has seen three attempts already.
    const failing = ctx.world.job('photo-avatar');
    const attempts = failing ? ctx.receiver!.attempts(failing.label) : [];
    if (attempts.length >= 3) {
      const gap1 = gap(attempts[0]!, attempts[1]!);
      const gap2 = gap(attempts[1]!, attempts[2]!);
      // The runner's stalls and busy time within the first wait made it look longer than it was.
      const stalled1 = ctx.stalls.busyWithin(attempts[0]!.receivedAt, attempts[1]!.receivedAt) / 1000;
      if (gap2.longest <= gap1.shortest - stalled1) {
        fail({ clause: 'WH-RETRY', message: 'the waits between attempts do not grow', expected: 'exponential backoff', received: `${gap1.shortest.toFixed(1)} s then ${gap2.longest.toFixed(1)} s` });
      }
    }
    if (!ctx.contract) return;
    const nominal = ctx.options.webhookFirstRetrySeconds;
    // The contract's jitter, a quarter second for the receiver's clock, a second for the
    // sender's queue, and the time the runner was itself stalled or busy between the two
    // receipts, which made the retry look later than it came.
    const { jitter, retryDelaysSeconds } = WEBHOOK_DELIVERY;
    const low = nominal * (1 - jitter) - 0.25;
    const high = nominal * (1 + jitter) + 1 + ctx.stalls.busyWithin(first!.receivedAt, second.receivedAt) / 1000;
    if (delay.longest < low || delay.shortest > high) {
      const seen = delay.shortest === delay.longest ? `${delay.longest.toFixed(2)} s` : `${Math.max(0, delay.shortest).toFixed(2)}–${delay.longest.toFixed(2)} s`;
      fail({ clause: 'ND-DELIVERY', message: `the first retry came ${seen} after the failure`, expected: `about ${nominal} s (±${Math.round(jitter * 100)} %): ${low.toFixed(2)}–${high.toFixed(2)} s`, received: seen, fix: `Retry after about ${retryDelaysSeconds.map((s) => `${formatNumber(s)} s`).join(', ')}, each ±${Math.round(jitter * 100)} %.` });
    }
  },
});
