// Which 2xx of a webhook's attempts ended its delivery, and what a sender sent after it:
// shared by webhooks.retried-after-failure, which watches for an attempt after the 2xx of
// the retried event, and webhooks.retry-schedule, which looks again once a sandbox clock
// has moved past the schedule. An attempt may be copied (the source allows duplicates),
// a quick retry may repeat the failed attempt byte for byte, and a loaded runner may give a
// 2xx too late for the sender: each is told apart here, once.
import { WEBHOOK_DELIVERY } from '../../../contract/numbers.ts';
import { WEBHOOK_TOLERANCE_SECONDS } from '../../../contract/webhookSignature.ts';
import { firstRetryLatestSeconds, type ResolvedOptions } from '../options.ts';
import { type Delivery, sameBytes } from '../receiver/server.ts';
import type { Stalls } from '../stalls.ts';
import { heldBeforeReading } from './arrivals.ts';

export type RetrySchedule = { delaysSeconds: readonly number[]; jitter: number };

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

/**
 * The longest an acknowledged event is watched for a further attempt. A schedule whose next
 * wait is longer (the contract's second wait is) is not watched to its end, which every run
 * against a service that keeps it would wait out: the event is then watched only as long as
 * the first retry's pause, and the check says so.
 */
export const MAX_WATCH_AFTER_ACK_SECONDS = 10;
/** The fix a sender that went on after a 2xx is told, wherever that is seen. */
export const ACK_ENDS_DELIVERY = 'Any 2xx ends delivery: stop the schedule once an attempt is acknowledged.';
/** A second for the sender's queue past the latest moment of an attempt, as the retry checks allow. */
const LATE_SLACK_SECONDS = 1;

/**
 * How long after an attempt acknowledged with a 2xx a sender that took no notice of it
 * would send the next one, at its latest (s): the schedule's next wait with its jitter and
 * a second where the profile states one, else twice the wait seen before the attempt
 * (backoff that doubles, the usual kind; the source leaves the factor open); 0 when the
 * schedule has ended there. `index` is the attempt's, from 0; `previousWait` the wait
 * before it as seen (s), when there was one.
 */
export function nextAttemptLatestSeconds(options: Pick<ResolvedOptions, 'webhookFirstRetrySeconds'>, schedule: RetrySchedule | undefined, index: number, previousWait: number | undefined): number {
  const scheduled = schedule?.delaysSeconds[index];
  const next =
    scheduled !== undefined ? scheduled * (1 + schedule!.jitter)
    : schedule !== undefined ? 0 // the schedule has ended: a sender stops there either way
    : previousWait !== undefined ? 2 * previousWait * (1 + WEBHOOK_DELIVERY.jitter)
    : firstRetryLatestSeconds(options);
  return next > 0 ? next + LATE_SLACK_SECONDS : 0;
}

/**
 * How long an acknowledged event is watched (s): until its next attempt would have come
 * (nextAttemptLatestSeconds) where that is within MAX_WATCH_AFTER_ACK_SECONDS, and never
 * less than the first retry's pause of at most 2 s this check has always allowed.
 */
export function watchAfterAckSeconds(options: Pick<ResolvedOptions, 'webhookFirstRetrySeconds'>, schedule: RetrySchedule | undefined, index: number, previousWait: number | undefined): number {
  const pause = Math.min(2, options.webhookFirstRetrySeconds);
  const latest = nextAttemptLatestSeconds(options, schedule, index, previousWait);
  return latest > 0 && latest <= MAX_WATCH_AFTER_ACK_SECONDS ? Math.max(pause, latest) : pause;
}

/** An attempt that answered 2xx, and whether the sender surely took it as the end of its delivery (why not, when not). */
export interface Acknowledgement {
  index: number;
  sure: boolean;
  doubt?: string;
}

/**
 * The first attempt at or after `from` that answered 2xx: the acknowledgement, and whether
 * the sender surely got it as one. Not surely when it repeats an earlier attempt byte for
 * byte (a copy, which the source allows at any time, or a retry stamped in the same second:
 * the two cannot be told apart), nor when the runner gave its 2xx after being held more
 * than ANSWERED_IN_TIME_MS (it may have reached a sender that had given the attempt up).
 * After one not sure, an attempt may rightly follow; its own 2xx is then the one to judge.
 * Undefined when none answered 2xx.
 */
export function acknowledgement(stalls: Stalls, attempts: readonly Delivery[], from = 0): Acknowledgement | undefined {
  const index = attempts.findIndex((d, i) => i >= from && d.answered >= 200 && d.answered < 300);
  if (index < 0) return undefined;
  const d = attempts[index]!;
  if (repeatsEarlier(attempts, index)) return { index, sure: false, doubt: `attempt ${d.seq} repeats an earlier attempt byte for byte: a copy, or a retry stamped in the same second` };
  const held = heldBeforeAnswer(stalls, d);
  if (held > ANSWERED_IN_TIME_MS) return { index, sure: false, doubt: `the ${d.answered} to attempt ${d.seq} was given after the runner was held ${(held / 1000).toFixed(1)} s since its stamp: the sender may have timed out` };
  return { index, sure: true };
}

/** The attempts after the one at `index`, but for repeats of an earlier one byte for byte (copies the source allows): each sent again. */
export function attemptsAfter(attempts: readonly Delivery[], index: number): Delivery[] {
  return attempts.slice(index + 1).filter((_, i) => !repeatsEarlier(attempts, index + 1 + i));
}

/**
 * Where the attempt at `index` stands in the schedule, from 0, for its next wait: counted
 * with the repeats before it (each a retry stamped in the same second) and without them
 * (each a copy). Both, since either may be so.
 */
export function schedulePositions(attempts: readonly Delivery[], index: number): number[] {
  const copies = attempts.slice(0, index).filter((_, i) => repeatsEarlier(attempts, i)).length;
  return copies === 0 ? [index] : [index, index - copies];
}

/** Whether the delivery at `index` repeats an earlier one byte for byte. */
function repeatsEarlier(deliveries: readonly Delivery[], index: number): boolean {
  const d = deliveries[index]!;
  return deliveries.slice(0, index).some((e) => sameBytes(e, d));
}
