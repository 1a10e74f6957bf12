import { WEBHOOK_TOLERANCE_SECONDS } from '../../../../client/src/signature.ts';
import { defineCheck, fail, STATEFUL } from '../../check.ts';
import { skip } from '../../context.ts';
import { arrivals, describeDelivery, retried } from './arrivals.ts';

export default defineCheck({
  id: 'webhooks.timestamp',
  title: 'X-Service-Timestamp is the Unix time of the attempt, in seconds',
  clauses: ['WH-TIMESTAMP'],
  decisions: ['ND-TIMESTAMP-AGE'],
  profiles: STATEFUL,
  needs: ['receiver'],
  async run(ctx) {
    await arrivals(ctx);
    await retried(ctx).catch(() => undefined);
    const deliveries = ctx.receiver!.deliveries();
    if (deliveries.length === 0) skip('no webhook arrived (see webhooks.event-type-matches-state)');
    for (const delivery of deliveries) {
      const value = delivery.headers['x-service-timestamp'];
      const fix = 'Send the Unix time of each attempt in whole seconds (10 digits today), taken when the attempt is signed.';
      if (value === undefined || !/^\d{1,12}$/.test(value.trim())) {
        fail({ clause: 'WH-TIMESTAMP', message: `a delivery to ${delivery.label} has ${value === undefined ? 'no X-Service-Timestamp' : `X-Service-Timestamp ${JSON.stringify(value)}, not whole seconds`}`, expected: 'whole seconds, e.g. 1762074881', received: value ?? '(absent)', fix, evidence: [describeDelivery(delivery)] });
      }
      const skew = Number(value) - delivery.receivedAt / 1000;
      if (Math.abs(skew) > WEBHOOK_TOLERANCE_SECONDS) {
        fail({ clause: 'WH-TIMESTAMP', message: `a delivery to ${delivery.label} is stamped ${Math.round(skew)} s from the time it arrived; receivers refuse more than ${WEBHOOK_TOLERANCE_SECONDS} s`, expected: `within ${WEBHOOK_TOLERANCE_SECONDS} s of arrival`, received: value, fix, evidence: [describeDelivery(delivery)] });
      }
    }
    // Each retry is stamped afresh (ND-TIMESTAMP-AGE: an old stamp on a late retry would be refused).
    const { deliveries: attempts } = await retried(ctx).catch(() => ({ deliveries: [] }));
    const [first, second] = attempts;
    if (ctx.contract && first && second && Number(second.headers['x-service-timestamp']) < Number(first.headers['x-service-timestamp'])) {
      fail({ clause: 'ND-TIMESTAMP-AGE', message: 'a retry carries an older timestamp than the first attempt', expected: 'a fresh timestamp per attempt', received: `${first.headers['x-service-timestamp']} then ${second.headers['x-service-timestamp']}`, evidence: [describeDelivery(first), describeDelivery(second)] });
    }
  },
});
