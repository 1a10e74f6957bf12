// Which 2xx of a webhook's attempts ended its delivery, and what a sender sent after it:
// shared by webhooks.retried-after-failure, which watches for an attempt after the 2xx of
// the retried event, and webhooks.retry-schedule, which looks again once a sandbox clock
// has moved past the schedule. An attempt may be copied (the source allows duplicates),
// a quick retry may repeat the failed attempt byte for byte, and a loaded runner may give a
// 2xx too late for the sender: each is told apart here, once.
import { WEBHOOK_DELIVERY } from '../../../contract/numbers.ts';
import { WEBHOOK_TOLERANCE_SECONDS } from '../../../contract/webhookSignature.ts';
import { firstRetryLatestSeconds, type ResolvedOptions } from '../options.ts';
import { DUPLICATE_WINDOW_MS, type Delivery } from '../receiver/server.ts';
import type { Stalls } from '../stalls.ts';
import { heldBeforeReading } from './arrivals.ts';

const SAME_HEADERS = ['x-service-event-id', 'x-service-timestamp', 'x-service-signature'];

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

/**
 * The first attempt at or after `from` that answered 2xx and is no copy of an earlier one:
 * the acknowledgement, with whether the runner gave its 2xx in time for the sender to have
 * surely got it (ANSWERED_IN_TIME_MS). One given later may have reached a sender that had
 * given the attempt up, so the attempt after it may be a retry; its own 2xx is then the one
 * to judge. Undefined when none answered 2xx.
 */
export function acknowledgement(stalls: Stalls, attempts: readonly Delivery[], from = 0): { index: number; inTime: boolean } | undefined {
  const index = attempts.findIndex((d, i) => i >= from && d.answered >= 200 && d.answered < 300 && !isCopyOfEarlier(stalls, attempts, i));
  return index < 0 ? undefined : { index, inTime: heldBeforeAnswer(stalls, attempts[index]!) <= ANSWERED_IN_TIME_MS };
}

/** The attempts after the one at `index` that are no copies of an earlier one: sent again. */
export function attemptsAfter(stalls: Stalls, attempts: readonly Delivery[], index: number): Delivery[] {
  return attempts.slice(index + 1).filter((_, i) => !isCopyOfEarlier(stalls, attempts, index + 1 + i));
}

/**
 * Whether the delivery at `index` repeats an earlier one byte for byte soon after it: a
 * copy the sender may have sent moments after that attempt, whose 2xx is not one the
 * attempt got (the retry may still come). Soon: within the receiver's window for copies,
 * lengthened by the runner's stalls in between (a copy read late on a stalled runner); its
 * busy time is not, since a busy runner still reads what arrives in turn. A repeat later
 * than that is a retry stamped in the same second as the attempt before it, as a quick
 * first retry often is.
 */
export function isCopyOfEarlier(stalls: Stalls, deliveries: readonly Delivery[], index: number): boolean {
  const d = deliveries[index]!;
  return deliveries
    .slice(0, index)
    .some((e) => e.rawBody === d.rawBody && SAME_HEADERS.every((h) => e.headers[h] === d.headers[h]) && d.receivedAt - e.receivedAt <= DUPLICATE_WINDOW_MS + stalls.within(e.receivedAt, d.receivedAt));
}
