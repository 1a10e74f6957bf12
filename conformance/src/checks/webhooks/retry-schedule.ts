import { defineCheck, SANDBOX } from '../../check.ts';
import { REACTION_MS } from '../../clock.ts';
import type { CheckContext } from '../../context.ts';
import { attemptsDue, describeDelivery } from '../../observe/arrivals.ts';
import { ACK_ENDS_DELIVERY, acknowledgement, attemptsAfter, MAX_WATCH_AFTER_ACK_SECONDS, nextAttemptLatestSeconds, type RetrySchedule, schedulePositions } from '../../observe/acknowledgement.ts';
import { fail, skip } from '../../outcome.ts';
import { retryScheduleOf } from '../../options.ts';
import type { Delivery } from '../../receiver/server.ts';

/** How long after an attempt arrives a sender may take to record its failure and schedule the retry. */
const SENDER_SETTLE_MS = 300;
/** How long to watch for an attempt that a move should not have made due yet. */
const EARLY_GRACE_MS = 500;
/** The longest a retry made due by a move of the clock is awaited, however late deliveries may be. */
const MAX_RETRY_WAIT_SECONDS = 15;
/** Tolerances of the first-retry check: the receiver's clock, and the sender's queue. */
const EARLY_SLACK_SECONDS = 0.25;
const LATE_SLACK_SECONDS = 1;

export default defineCheck({
  id: 'webhooks.retry-schedule',
  title: 'A delivery that keeps failing is retried on the documented schedule, then given up',
  asserts:
    "With a sandbox clock, for the event whose receiver always answers 500: each retry comes after the documented wait since the attempt before (within its jitter, measured in the account's time, the clock moved just short of the earliest moment and then past the latest), the number of attempts is the schedule's, and after the last one no attempt follows, however far the clock moves; nor does one follow the 2xx that ended the retried event's delivery, where webhooks.retried-after-failure could not watch it that long.",
  clauses: ['WH-RETRY'],
  decisions: ['ND-DELIVERY', 'ND-SANDBOX-CLOCK'],
  profiles: SANDBOX,
  needs: ['clock', 'receiver'],
  phase: 'clock',
  // Each retry: the sender's settling, the early watch, two moves of the clock and a
  // delivery's lateness; then the watch after the last. (The first attempt is due with
  // the run's shared jobs: its avatar ends with theirs.)
  waits: (a) => {
    const retries = retryScheduleOf(a.options)?.delaysSeconds.length ?? 0;
    const each = Math.min(a.delivery, MAX_RETRY_WAIT_SECONDS) + 2 * a.request + (SENDER_SETTLE_MS + EARLY_GRACE_MS) / 1000;
    return retries * each + REACTION_MS / 1000;
  },
  async run(ctx) {
    const schedule = retryScheduleOf(ctx.options);
    if (!schedule) skip('the implementation profile states no retry schedule (webhook_retries) and --webhook-retries was not given');
    const job = await ctx.world.kickoffJob('photo-avatar');
    await job.settled;
    if (!job.webhookUrl) skip('the photo avatar was made without a webhook');
    const receiver = ctx.receiver!;
    const waitMs = Math.min(ctx.options.webhookRetryTimeoutSeconds, MAX_RETRY_WAIT_SECONDS) * 1000;
    if ((await attemptsDue(ctx, job, 1)).length === 0) {
      skip('no delivery of the photo avatar event arrived at all (see webhooks.event-type-matches-state)');
    }

    const { delaysSeconds, jitter } = schedule;
    for (const [i, delay] of delaysSeconds.entries()) {
      const low = delay * (1 - jitter) - EARLY_SLACK_SECONDS;
      const high = delay * (1 + jitter) + LATE_SLACK_SECONDS;
      const previous = receiver.attempts(job.label)[i]!;
      const since = () => (ctx.clock.accountTime('main', ctx.now()).earliest - ctx.clock.accountTime('main', previous.receivedAt).latest) / 1000;
      if (receiver.attempts(job.label).length < i + 2) {
        // The sender schedules the retry once it has the failure: a move before that could be lost.
        await ctx.sleep(Math.max(0, previous.receivedAt + SENDER_SETTLE_MS - ctx.now()));
        const move = async (seconds: number) => {
          if (!(await ctx.clock.advance('main', seconds))) skip("the main key's sandbox clock refused a move");
        };
        // Just short of the earliest moment the retry may come: nothing may arrive yet.
        if (since() < low - 1) {
          await move(Math.floor(low - 1 - since()));
          await ctx.sleep(EARLY_GRACE_MS);
        }
        // Then past the latest: it must come now.
        if (receiver.attempts(job.label).length < i + 2 && since() < high) await move(high - since());
        await receiver.waitFor(job.label, i + 2, waitMs);
      }
      const next = receiver.attempts(job.label)[i + 1];
      if (!next && i === 0) skip('no retry came at all (see webhooks.retried-after-failure)');
      if (!next) {
        fail({
          clause: 'WH-RETRY',
          message: `attempt ${i + 2} of the ${job.label} event did not come: the account's time moved ${Math.round(since())} s past attempt ${i + 1}, which the receiver answered ${previous.answered}`,
          expected: `attempt ${i + 2} about ${delay} s (±${Math.round(jitter * 100)} %) after attempt ${i + 1}; ${delaysSeconds.length + 1} attempts in all`,
          received: `${i + 1} attempts`,
          fix: 'Retry a failed delivery on the documented schedule, in the account\'s time where a sandbox clock moves it.',
          evidence: [describeDelivery(previous)],
        });
      }
      judgeGap(ctx, job.label, i, previous, next, delay, jitter, low, high);
    }

    // After the last attempt, a move far past the last wait: no attempt may follow.
    const last = Math.max(...delaysSeconds);
    if (!(await ctx.clock.advance('main', 2 * last * (1 + jitter) + 60))) skip("the main key's sandbox clock refused a move");
    await ctx.sleep(REACTION_MS);
    const extra = receiver.attempts(job.label).slice(delaysSeconds.length + 1);
    if (extra.length > 0) {
      fail({
        clause: 'WH-RETRY',
        message: `the ${job.label} event was attempted ${delaysSeconds.length + 1 + extra.length} times: more than the schedule's ${delaysSeconds.length + 1}`,
        expected: `${delaysSeconds.length} retries, then no more`,
        received: `${extra.length} more after the last`,
        fix: 'Stop after the last retry of the schedule; polling stays the source of truth.',
        evidence: extra.slice(0, 2).map(describeDelivery),
      });
    }
    judgeAcknowledgedEvent(ctx, schedule);
  },
});

/**
 * The event whose retry was acknowledged (the prompt avatar's, answered 500 and then 2xx),
 * where webhooks.retried-after-failure could not watch it until its next scheduled attempt
 * would have come: the moves above took the account's time far past every wait of the
 * schedule, so any attempt a sender that took no notice of the 2xx still had for it has
 * come by now. Where that check could watch it, the judgement is its alone.
 */
function judgeAcknowledgedEvent(ctx: CheckContext, schedule: RetrySchedule): void {
  const job = ctx.world.job('prompt-avatar');
  if (!job?.webhookUrl) return;
  const attempts = ctx.receiver!.attempts(job.label);
  for (let from = 0; ; ) {
    const found = acknowledgement(ctx.stalls, attempts, from);
    if (!found) return;
    // Not surely the end of the delivery: the attempt after it may be a retry, judged in turn.
    if (!found.sure) {
      from = found.index + 1;
      continue;
    }
    const ack = attempts[found.index]!;
    const after = attemptsAfter(attempts, found.index);
    const previousWait = found.index > 0 ? ctx.clock.gap('main', attempts[found.index - 1]!.receivedAt, ack.receivedAt).longest : undefined;
    const latest = Math.max(...schedulePositions(attempts, found.index).map((p) => nextAttemptLatestSeconds(ctx.options, schedule, p, previousWait)));
    if (latest <= MAX_WATCH_AFTER_ACK_SECONDS || after.length === 0) return;
    fail({
      clause: 'WH-RETRY',
      message: `the ${job.label} event was sent again after the receiver acknowledged attempt ${ack.seq} with ${ack.answered}, once the account's time had moved past the schedule`,
      expected: 'no attempt after a 2xx',
      received: `${after.length} more`,
      fix: ACK_ENDS_DELIVERY,
      evidence: [describeDelivery(ack), ...after.slice(0, 1).map(describeDelivery)],
    });
  }
}

/**
 * Fails only when the whole range the wait may have had is outside the schedule. The
 * runner's own stalls and busy time between the two arrivals made the wait look longer:
 * they are left out of its shortest before it is called late.
 */
function judgeGap(ctx: CheckContext, label: string, i: number, previous: Delivery, next: Delivery, delay: number, jitter: number, low: number, high: number): void {
  const { shortest, longest } = ctx.clock.gap('main', previous.receivedAt, next.receivedAt);
  const stalled = ctx.stalls.busyWithin(previous.receivedAt, next.receivedAt) / 1000;
  if (longest >= low && shortest - stalled <= high) return;
  const early = longest < low;
  fail({
    clause: 'WH-RETRY',
    message: `attempt ${i + 2} of the ${label} event came ${early ? 'early' : 'late'}: ${shortest === longest ? `${longest.toFixed(1)} s` : `${Math.max(0, shortest).toFixed(1)}–${longest.toFixed(1)} s`} after attempt ${i + 1} in the account's time`,
    expected: `about ${delay} s (±${Math.round(jitter * 100)} %): ${low.toFixed(2)}–${high.toFixed(2)} s`,
    received: `${longest.toFixed(1)} s at most, ${Math.max(0, shortest).toFixed(1)} s at least${stalled > 0 ? `, of which the runner itself was stalled or busy ${stalled.toFixed(1)} s` : ''}`,
    fix: 'Wait the documented time before each retry, counted from the attempt before, in the account\'s time.',
    evidence: [describeDelivery(previous), describeDelivery(next)],
  });
}
