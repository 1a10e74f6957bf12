import { WEBHOOK_TOLERANCE_SECONDS } from '../../../../contract/webhookSignature.ts';
import { defineCheck, STATEFUL } from '../../check.ts';
import { arrivals, describeDelivery, heldBeforeReading, retried } from '../../observe/arrivals.ts';
import { fail, skip } from '../../outcome.ts';
import type { Delivery } from '../../receiver/server.ts';
import type { Stalls } from '../../stalls.ts';

/**
 * How far the time between two stamps may fall behind the time between their arrivals:
 * a stamp reused or taken too early on a retry falls behind by the whole wait.
 */
const DRIFT_SECONDS = 1.5;
/**
 * How far it may run ahead. Arrivals are timed by the runner's own event loop, and a
 * runner busy when the earlier attempt arrived times it late, which shortens the gap
 * between arrivals (seen: 1.8 s on a loaded machine); no sender's fault runs the stamps
 * ahead by more than the whole seconds they are rounded to.
 */
const AHEAD_SECONDS = 3;
/**
 * How far back before a later attempt's arrival the runner's stalls and busy time are taken
 * to have delayed reading it. Short: that attempt's stamp cannot bound it (a stamp frozen at
 * the first attempt's would leave the whole wait out), and the longest waits must still show
 * it. The earlier attempt's lateness is bounded by its own stamp (and the signature's
 * tolerance): a stamp older than its attempt is what the "ahead" side catches, and on a
 * runner that was not busy all that while it still does (seen: an attempt read 7 s after its
 * stamp by a runner held that long, failed with a 3 s allowance).
 */
const STALL_LOOKBACK_MS = 1500;

export default defineCheck({
  id: 'webhooks.timestamp',
  title: 'X-Service-Timestamp is the Unix time of the attempt, in seconds',
  asserts:
    'Every delivery carries X-Service-Timestamp as whole Unix seconds within 300 s of its arrival; and it is the time of that attempt: between two attempts of one event the stamps move as far as the arrivals do (no more than 1.5 s less, 3 s more, since the runner times arrivals on its own busy event loop, and its own stalls before an arrival left out), so a retry is never sent with the first attempt\'s stamp.',
  clauses: ['WH-TIMESTAMP'],
  decisions: ['ND-TIMESTAMP-AGE'],
  profiles: STATEFUL,
  needs: ['receiver'],
  async run(ctx) {
    await arrivals(ctx);
    await retried(ctx).catch(() => undefined);
    const deliveries = ctx.receiver!.deliveries();
    if (deliveries.length === 0) skip('no webhook arrived (see webhooks.event-type-matches-state)');
    const fix = 'Send the Unix time of each attempt in whole seconds (10 digits today), taken when the attempt is signed.';
    for (const delivery of deliveries) {
      const value = delivery.headers['x-service-timestamp'];
      if (value === undefined || !/^\d{1,12}$/.test(value.trim())) {
        fail({ clause: 'WH-TIMESTAMP', message: `a delivery to ${delivery.label} has ${value === undefined ? 'no X-Service-Timestamp' : `X-Service-Timestamp ${JSON.stringify(value)}, not whole seconds`}`, expected: 'whole seconds, e.g. 1762074881', received: value ?? '(absent)', fix, evidence: [describeDelivery(delivery)] });
      }
      const skew = Number(value) - delivery.receivedAt / 1000;
      if (Math.abs(skew) > WEBHOOK_TOLERANCE_SECONDS) {
        fail({ clause: 'WH-TIMESTAMP', message: `a delivery to ${delivery.label} is stamped ${Math.round(skew)} s from the time it arrived; receivers refuse more than ${WEBHOOK_TOLERANCE_SECONDS} s`, expected: `within ${WEBHOOK_TOLERANCE_SECONDS} s of arrival`, received: value, fix, evidence: [describeDelivery(delivery)] });
      }
    }
    // The time of the attempt: consecutive attempts of one event, stamp against arrival.
    const labels = [...new Set(deliveries.map((d) => d.label))];
    for (const label of labels) {
      const attempts = ctx.receiver!.attempts(label);
      for (let i = 1; i < attempts.length; i++) judgePair(ctx.stalls, attempts[i - 1]!, attempts[i]!, fix);
    }
    // Each retry is stamped afresh (ND-TIMESTAMP-AGE: an old stamp on a late retry would be refused).
    const { deliveries: attempts } = await retried(ctx).catch(() => ({ deliveries: [] as Delivery[] }));
    const [first, second] = attempts;
    if (ctx.contract && first && second && Number(second.headers['x-service-timestamp']) < Number(first.headers['x-service-timestamp'])) {
      fail({ clause: 'ND-TIMESTAMP-AGE', message: 'a retry carries an older timestamp than the first attempt', expected: 'a fresh timestamp per attempt', received: `${first.headers['x-service-timestamp']} then ${second.headers['x-service-timestamp']}`, evidence: [describeDelivery(first), describeDelivery(second)] });
    }
  },
});

/**
 * Why two attempts of one event are stamped unlike the time between their arrivals, or
 * undefined when they agree: the later one's stamp moved as far as the arrivals did, less the
 * runner's own lateness in reading either (WH-TIMESTAMP).
 */
export function stampsDisagree(stalls: Stalls, earlier: Delivery, later: Delivery): { stamped: number; arrived: number } | undefined {
  const stamped = Number(later.headers['x-service-timestamp']) - Number(earlier.headers['x-service-timestamp']);
  const arrived = (later.receivedAt - earlier.receivedAt) / 1000;
  // A later attempt read late makes the arrivals look further apart than the stamps; an
  // earlier one read late, closer. Either lateness is the runner's, not the sender's.
  const laterReadLate = heldBeforeReading(stalls, later, STALL_LOOKBACK_MS) / 1000;
  const earlierReadLate = heldBeforeReading(stalls, earlier, WEBHOOK_TOLERANCE_SECONDS * 1000) / 1000;
  return stamped < arrived - laterReadLate - DRIFT_SECONDS || stamped > arrived + earlierReadLate + AHEAD_SECONDS ? { stamped, arrived } : undefined;
}

function judgePair(stalls: Stalls, earlier: Delivery, later: Delivery, fix: string): void {
  const disagree = stampsDisagree(stalls, earlier, later);
  if (disagree) {
    const { stamped, arrived } = disagree;
    fail({
      clause: 'WH-TIMESTAMP',
      message: `two attempts of one event to ${later.label} arrived ${arrived.toFixed(1)} s apart but their timestamps are ${stamped} s apart: the timestamp is not the time of the attempt`,
      expected: `stamps about ${arrived.toFixed(1)} s apart (from ${DRIFT_SECONDS} s fewer to ${AHEAD_SECONDS} s more)`,
      received: `${earlier.headers['x-service-timestamp']} then ${later.headers['x-service-timestamp']}`,
      fix,
      evidence: [describeDelivery(earlier), describeDelivery(later)],
    });
  }
}
