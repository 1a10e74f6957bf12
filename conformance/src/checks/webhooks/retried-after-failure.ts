import { formatNumber, WEBHOOK_DELIVERY } from '../../../../contract/numbers.ts';
import { defineCheck, STATEFUL } from '../../check.ts';
import { firstRetryLatestSeconds } from '../../options.ts';
import { ACK_ENDS_DELIVERY, acknowledgement, attemptsAfter, heldBeforeAnswer, MAX_WATCH_AFTER_ACK_SECONDS, nextAttemptLatestSeconds, watchAfterAckSeconds } from '../../observe/acknowledgement.ts';
import { describeDelivery, retried } from '../../observe/arrivals.ts';
import { fail, skip } from '../../outcome.ts';
import type { Delivery } from '../../receiver/server.ts';

/**
 * Acknowledgements judged in turn: a 2xx the runner gave too late for the sender may be
 * followed by a retry, whose 2xx is then judged (a loaded runner is seldom late twice).
 */
const ACK_ROUNDS = 2;

export default defineCheck({
  id: 'webhooks.retried-after-failure',
  title: 'A delivery answered 500 is retried after a delay, and not after success',
  asserts: 'A delivery answered 500 is attempted again after a pause, waits between attempts grow, and no attempt follows a 2xx (watched until the next attempt of the schedule would have come, where that is within 10 s; when the runner gave the 2xx too late for the sender, the 2xx of the attempt after it is judged instead). A copy of an attempt sent moments later (same event, timestamp and signature) is a duplicate the source allows, not a retry; a repeat later than that is a retry stamped in the same second.',
  clauses: ['WH-RETRY'],
  decisions: ['ND-DELIVERY'],
  profiles: STATEFUL,
  needs: ['receiver'],
  // The retry itself is awaited with the run's shared jobs; then the watch after its 2xx
  // for an attempt that should not come (the schedule's second wait, when it states one),
  // and after the next attempt's when the runner gave that 2xx too late.
  waits: (a) => {
    const schedule = a.options.webhookRetries ?? a.options.implementation.retries ?? undefined;
    const first = watchAfterAckSeconds(a.options, schedule, 1, a.options.webhookFirstRetrySeconds);
    return first + watchAfterAckSeconds(a.options, schedule, 2, first);
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
    // No attempt after one was acknowledged (a copy of an earlier attempt is not one).
    // Watched until the next attempt of a sender that took no notice of the 2xx would have
    // come: a sender that runs its whole schedule sends it one wait later, not at once.
    const schedule = ctx.options.webhookRetries ?? ctx.shape.retries;
    let among: readonly Delivery[] = deliveries;
    let from = 0;
    for (let round = 1; round <= ACK_ROUNDS; round++) {
      const found = acknowledgement(ctx.stalls, among, from);
      if (!found) break;
      const { index: acked, inTime } = found;
      const ack = among[acked]!;
      if (!inTime) ctx.note(`the ${ack.answered} to attempt ${ack.seq} was given after the runner was held ${(heldBeforeAnswer(ctx.stalls, ack) / 1000).toFixed(1)} s since its stamp: the sender may have timed out, so it is not taken as the acknowledgement`);
      const previousWait = acked > 0 ? gap(among[acked - 1]!, ack).longest : undefined;
      const watchSeconds = watchAfterAckSeconds(ctx.options, schedule, acked, previousWait);
      const latest = nextAttemptLatestSeconds(ctx.options, schedule, acked, previousWait);
      if (latest > MAX_WATCH_AFTER_ACK_SECONDS) ctx.note(`after the ${ack.answered} to attempt ${ack.seq}, a sender that took no notice of it would send again up to ${latest.toFixed(1)} s later, past the ${MAX_WATCH_AFTER_ACK_SECONDS} s this check watches: it watched ${watchSeconds.toFixed(1)} s (webhooks.retry-schedule looks again after moving a sandbox clock past the schedule)`);
      const watchedUntil = ack.receivedAt + watchSeconds * 1000;
      let after: Delivery[] = [];
      for (let count = acked + 2; after.length === 0 && ctx.now() < watchedUntil; count++) {
        const attempts = await ctx.receiver!.waitFor(job.label, count, Math.max(0, watchedUntil - ctx.now()));
        if (attempts.length < count) break;
        among = attempts;
        after = attemptsAfter(ctx.stalls, attempts, acked);
      }
      if (after.length === 0) break;
      if (inTime) {
        fail({
          clause: 'WH-RETRY',
          message: `the event was sent again ${gap(ack, after[0]!).longest.toFixed(1)} s after the receiver acknowledged attempt ${ack.seq} with ${ack.answered}`,
          expected: `no attempt after a 2xx (watched for ${watchSeconds.toFixed(1)} s)`,
          received: `${after.length} more`,
          fix: ACK_ENDS_DELIVERY,
          evidence: [describeDelivery(ack), ...after.slice(0, 1).map(describeDelivery)],
        });
      }
      // Given too late, the 2xx may have reached a sender that had given the attempt up: the
      // attempt after it is a retry, and its own 2xx is judged in the next round.
      from = acked + 1;
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
