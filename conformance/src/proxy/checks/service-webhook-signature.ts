import { timingSafeEqual } from 'node:crypto';
import { signWebhook } from '../../../../contract/webhookSignature.ts';
import { fail, notApplicable } from '../../outcome.ts';
import { defineProxyCheck, describeDelivery } from '../check.ts';

export default defineProxyCheck({
  id: 'service.webhook-signature',
  title: 'Each webhook is signed with the signing secret over its timestamp and raw body',
  asserts: 'With --signing-secret, every delivery the service sent through the proxy carries X-Service-Signature equal to v1= and the hex HMAC-SHA256, keyed by the secret, of X-Service-Timestamp, a dot and the body exactly as it arrived.',
  party: 'service',
  clauses: ['WH-SIGNATURE', 'AUTH-SIGNING-SECRET'],
  run({ traffic, signingSecret }) {
    if (traffic.deliveries.length === 0) notApplicable('no webhook was delivered through the proxy (the client named no webhook_url, or the service sent none)');
    if (!signingSecret) notApplicable('the proxy was not given the signing secret (--signing-secret), so signatures cannot be verified');
    for (const delivery of traffic.deliveries) {
      const timestamp = delivery.headers['x-service-timestamp'];
      const signature = delivery.headers['x-service-signature'] ?? '';
      const expected = timestamp !== undefined && /^\d+$/.test(timestamp) ? signWebhook(signingSecret, Number(timestamp), delivery.rawBody) : undefined;
      if (expected !== undefined && signature.length === expected.length && timingSafeEqual(Buffer.from(signature), Buffer.from(expected))) continue;
      fail({
        clause: 'WH-SIGNATURE',
        message: `webhook #${delivery.seq} ${expected === undefined ? 'has no timestamp in whole seconds to verify its signature with' : 'carries a signature that does not verify with the signing secret'}`,
        expected: 'X-Service-Signature: v1=<hex HMAC-SHA256 of "<timestamp>.<raw body>">',
        received: `X-Service-Signature: ${signature || '(absent)'}`,
        fix: 'Sign `${timestamp}.${rawBody}`, the exact bytes sent, with the account\'s signing secret; hex-encode and prefix with v1=.',
        evidence: [describeDelivery(delivery)],
      });
    }
  },
});
