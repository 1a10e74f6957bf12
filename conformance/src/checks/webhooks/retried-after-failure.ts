import { formatNumber, WEBHOOK_DELIVERY } from '../../../../contract/numbers.ts';
import { defineCheck, STATEFUL } from '../../check.ts';
import { firstRetryLatestSeconds, retryScheduleOf } from '../../options.ts';
import { ACK_ENDS_DELIVERY, acknowledgement, attemptsAfter, MAX_WATCH_AFTER_ACK_SECONDS, nextAttemptLatestSeconds, schedulePositions, watchAfterAckSeconds } from '../../observe/acknowledgement.ts';
import { describeDelivery, retried } from '../../observe/arrivals.ts';
import { fail, skip } from '../../outcome.ts';
import type { Delivery } from '../../receiver/server.ts';

/**
 * Acknowledgements judged in turn: a 2xx not surely the end (a repeat, or given too late)
 * may be followed by a retry, whose 2xx is then judged (seldom is that one in doubt too).
 */
const ACK_ROUNDS = 2;

export default defineCheck({
  id: 'webhooks.retried-after-failure',
  title: 'A delivery answered 500 is retried after a delay, and not after success',
  asserts: `A delivery answered 500 is attempted again after a pause, waits between attempts grow, and no attempt follows the 2xx that ended the delivery (watched until the next attempt of the schedule would have come, where that is within ${MAX_WATCH_AFTER_ACK_SECONDS} s). A repeat of an attempt byte for byte (same event, timestamp and signature) is a copy the source allows or a retry stamped in the same second: never an attempt after a 2xx, and its own 2xx, like one the runner gave too late for the sender, is not surely the end, so the 2xx of an attempt after it is judged instead.`,
  clauses: ['WH-RETRY'],
  decisions: ['ND-DELIVERY'],
  profiles: STATEFUL,
  needs: ['receiver'],
  // The retry itself is awaited with the run's shared jobs; then the watch after its 2xx
  // for an attempt that should not come, once more when that 2xx was not surely the end.
  waits: (a) => {
    const schedule = retryScheduleOf(a.options);
    const longest = schedule ? Math.max(...[1, 2, 3].map((i) => watchAfterAckSeconds(a.options, schedule, i, undefined))) : MAX_WATCH_AFTER_ACK_SECONDS;
    return ACK_ROUNDS * longest;
  },
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
    // No attempt after the 2xx that ended the delivery. Watched until a sender that took no
    // notice of it would have sent again: one that runs its whole schedule sends the next
    // attempt one wait later, not at once.
    const schedule = retryScheduleOf(ctx.options);
    const receiver = ctx.receiver!;
    let from = 0;
    for (let round = 1; round <= ACK_ROUNDS; round++) {
      const seen = receiver.attempts(job.label);
      const found = acknowledgement(ctx.stalls, seen, from);
      if (!found) break;
      const ack = seen[found.index]!;
      if (found.doubt) ctx.note(`${found.doubt}: not taken as the acknowledgement; an attempt after it is judged by its own 2xx`);
      const previousWait = found.index > 0 ? gap(seen[found.index - 1]!, ack).longest : undefined;
      const positions = schedulePositions(seen, found.index);
      const watchSeconds = Math.max(...positions.map((p) => watchAfterAckSeconds(ctx.options, schedule, p, previousWait)));
      const latest = Math.max(...positions.map((p) => nextAttemptLatestSeconds(ctx.options, schedule, p, previousWait)));
      if (latest > MAX_WATCH_AFTER_ACK_SECONDS) ctx.note(`after the ${ack.answered} to attempt ${ack.seq}, a sender that took no notice of it would send again up to ${latest.toFixed(1)} s later, past the ${MAX_WATCH_AFTER_ACK_SECONDS} s this check watches: it watched ${watchSeconds.toFixed(1)} s (webhooks.retry-schedule looks again after moving a sandbox clock past the schedule)`);
      // The watch leaves out the runner's stalls; what came is judged however late the check got here.
      const remaining = () => ack.receivedAt + watchSeconds * 1000 + ctx.stalls.within(ack.receivedAt, ctx.now()) - ctx.now();
      for (let count = seen.length + 1; attemptsAfter(receiver.attempts(job.label), found.index).length === 0 && remaining() > 0; count++) {
        if ((await receiver.waitFor(job.label, count, remaining())).length < count) break;
      }
      const after = attemptsAfter(receiver.attempts(job.label), found.index);
      if (after.length === 0) break;
      if (found.sure) {
        fail({
          clause: 'WH-RETRY',
          message: `the event was sent again ${gap(ack, after[0]!).longest.toFixed(1)} s after the receiver acknowledged attempt ${ack.seq} with ${ack.answered}`,
          expected: `no attempt after a 2xx (watched for ${watchSeconds.toFixed(1)} s)`,
          received: `${after.length} more`,
          fix: ACK_ENDS_DELIVERY,
          evidence: [describeDelivery(ack), ...after.slice(0, 1).map(describeDelivery)],
        });
      }
      from = found.index + 1;
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
