import { WEBHOOK_TOLERANCE_SECONDS } from '../../../../contract/webhookSignature.ts';
import { fail, notApplicable } from '../../outcome.ts';
import { defineProxyCheck, describeDelivery } from '../check.ts';

export default defineProxyCheck({
  id: 'service.webhook-timestamp',
  title: 'Each webhook\'s X-Service-Timestamp is the Unix time of its attempt in seconds',
  asserts: `Every delivery carries X-Service-Timestamp as whole seconds of Unix time, within ${WEBHOOK_TOLERANCE_SECONDS} s of when it reached the proxy (a receiver refuses anything older; milliseconds are far off).`,
  party: 'service',
  clauses: ['WH-TIMESTAMP'],
  run({ traffic }) {
    if (traffic.deliveries.length === 0) notApplicable('no webhook was delivered through the proxy');
    for (const delivery of traffic.deliveries) {
      const value = delivery.headers['x-service-timestamp'];
      const seconds = value !== undefined && /^\d+$/.test(value) ? Number(value) : undefined;
      if (seconds !== undefined && Math.abs(seconds - delivery.arrivedAt / 1000) <= WEBHOOK_TOLERANCE_SECONDS) continue;
      fail({
        clause: 'WH-TIMESTAMP',
        message: `webhook #${delivery.seq} carries X-Service-Timestamp: ${value ?? '(absent)'}, ${seconds === undefined ? 'not whole seconds' : `${Math.round(seconds - delivery.arrivedAt / 1000)} s from when it arrived`}`,
        expected: `about ${Math.floor(delivery.arrivedAt / 1000)} (Unix seconds)`,
        received: value ?? '(absent)',
        fix: 'Stamp each attempt with the Unix time in seconds when it is sent, and sign that value.',
        evidence: [describeDelivery(delivery)],
      });
    }
  },
});
