import { createHmac } from 'node:crypto';
import { signWebhook } from '../../../../contract/webhookSignature.ts';
import { defineCheck, STATEFUL } from '../../check.ts';
import type { Delivery } from '../../receiver/server.ts';
import { arrivals, describeDelivery } from '../../observe/arrivals.ts';
import { fail, skip } from '../../outcome.ts';

export default defineCheck({
  id: 'webhooks.signature',
  title: 'Every delivery is signed: v1= hex HMAC-SHA256(secret, timestamp.rawBody)',
  asserts: 'Every delivery, retries and duplicates included, carries X-Service-Signature equal to v1= and the lower-case hex HMAC-SHA256, keyed by the integration\'s signing secret, of its X-Service-Timestamp, a dot and the exact body bytes.',
  clauses: ['WH-SIGNATURE', 'AUTH-SIGNING-SECRET'],
  profiles: STATEFUL,
  needs: ['receiver'],
  async run(ctx) {
    await arrivals(ctx);
    const deliveries = ctx.receiver!.deliveries();
    if (deliveries.length === 0) skip('no webhook arrived (see webhooks.event-type-matches-state)');
    const secret = ctx.options.signingSecret!;
    for (const delivery of deliveries) {
      const signature = delivery.headers['x-service-signature'];
      const timestamp = delivery.headers['x-service-timestamp'];
      if (signature === undefined) {
        fail({ clause: 'WH-SIGNATURE', message: `a delivery to ${delivery.label} has no X-Service-Signature`, expected: 'X-Service-Signature: v1=<hex>', received: '(absent)', fix: 'Sign every attempt.', evidence: [describeDelivery(delivery)] });
      }
      // The timestamp's format is webhooks.timestamp's concern; sign with what was sent.
      if (timestamp === undefined || !/^\d+$/.test(timestamp.trim()) || !Number.isSafeInteger(Number(timestamp))) continue;
      const expected = signWebhook(secret, Number(timestamp.trim()), Buffer.from(delivery.rawBody, 'utf8'));
      if (signature.trim() !== expected) {
        fail({
          clause: 'WH-SIGNATURE',
          message: `the signature of a delivery to ${delivery.label} does not verify with the signing secret${diagnose(secret, timestamp.trim(), delivery, signature.trim())}`,
          expected,
          received: signature,
          fix: 'Sign `${timestamp}.${rawBody}` (the X-Service-Timestamp value, a dot, the exact body bytes sent) with HMAC-SHA256 keyed by the signing secret; send v1= and lowercase hex.',
          evidence: [describeDelivery(delivery)],
        });
      }
    }
  },
});

/** Names the likely mistake when a signature matches a known wrong scheme. */
function diagnose(secret: string, timestamp: string, delivery: Delivery, signature: string): string {
  const hex = (message: string) => `v1=${createHmac('sha256', secret).update(message).digest('hex')}`;
  const guesses: [string, string][] = [
    [hex(delivery.rawBody), ': it is the HMAC of the body alone, without the timestamp'],
    [hex(`${timestamp}${delivery.rawBody}`), ': the dot between timestamp and body is missing'],
    [hex(`${delivery.rawBody}.${timestamp}`), ': body and timestamp are swapped'],
    [`v1=${createHmac('sha256', secret).update(`${timestamp}.${delivery.rawBody}`).digest('base64')}`, ': it is base64, not hex'],
  ];
  if (signature.toLowerCase() === signWebhook(secret, Number(timestamp), delivery.rawBody)) return ': the hex is upper-case';
  return guesses.find(([candidate]) => candidate === signature)?.[1] ?? ' (wrong secret, or the body was changed after signing)';
}
