import {
  STANDARD_WEBHOOK_ID_HEADER,
  STANDARD_WEBHOOK_SIGNATURE_HEADER,
  STANDARD_WEBHOOK_TIMESTAMP_HEADER,
  signStandardWebhook,
} from '../../../../contract/webhookSignature.ts';
import { defineCheck, STATEFUL } from '../../check.ts';
import { arrivals, describeDelivery } from '../../observe/arrivals.ts';
import { fail, notApplicable, skip } from '../../outcome.ts';

export default defineCheck({
  id: 'webhooks.standard-signature',
  title: 'An account opted in to Standard Webhooks gets webhook-id, webhook-timestamp and a webhook-signature that verifies',
  asserts:
    'When the run is told the account is opted in to Standard Webhooks (--standard-webhooks): every delivery, retries included, carries webhook-id equal to X-Service-Event-Id, webhook-timestamp equal to X-Service-Timestamp, and a webhook-signature with a v1, entry equal to the base64 HMAC-SHA256 of the ID, a dot, the timestamp, a dot and the exact body bytes, keyed with the bytes the signing secret\'s base64 after whsec_ encodes; X-Service-Signature is judged beside it by webhooks.signature, unchanged.',
  clauses: [],
  decisions: ['ND-STANDARD-WEBHOOKS'],
  profiles: STATEFUL,
  // The source signs with X-Service-* alone; Standard Webhooks is an option the run is told of.
  notRequiredIn: ['core', 'production'],
  needs: ['receiver'],
  async run(ctx) {
    if (!ctx.options.standardWebhooks) notApplicable('the run was not told that the account receives Standard Webhooks headers (--standard-webhooks)');
    await arrivals(ctx);
    const deliveries = ctx.receiver!.deliveries();
    if (deliveries.length === 0) skip('no webhook arrived (see webhooks.event-type-matches-state)');
    const secret = ctx.options.signingSecret!;
    for (const delivery of deliveries) {
      const h = delivery.headers;
      const id = h[STANDARD_WEBHOOK_ID_HEADER];
      const timestamp = h[STANDARD_WEBHOOK_TIMESTAMP_HEADER];
      const signatures = h[STANDARD_WEBHOOK_SIGNATURE_HEADER];
      const evidence = [describeDelivery(delivery)];
      const fix = 'On every attempt to an opted-in account, send webhook-id (the event ID), webhook-timestamp (the same seconds as X-Service-Timestamp) and webhook-signature: v1, and the base64 HMAC-SHA256 of `${id}.${timestamp}.${rawBody}` keyed with the decoded secret.';
      if (id === undefined || timestamp === undefined || signatures === undefined) {
        fail({
          clause: 'ND-STANDARD-WEBHOOKS',
          message: `a delivery to ${delivery.label} lacks ${[[STANDARD_WEBHOOK_ID_HEADER, id], [STANDARD_WEBHOOK_TIMESTAMP_HEADER, timestamp], [STANDARD_WEBHOOK_SIGNATURE_HEADER, signatures]].filter(([, v]) => v === undefined).map(([n]) => n).join(', ')}`,
          expected: 'webhook-id, webhook-timestamp and webhook-signature on every delivery',
          received: '(absent)',
          fix,
          evidence,
        });
      }
      if (id.trim() !== (h['x-service-event-id'] ?? '').trim() || timestamp.trim() !== (h['x-service-timestamp'] ?? '').trim()) {
        fail({
          clause: 'ND-STANDARD-WEBHOOKS',
          message: `a delivery to ${delivery.label} has a webhook-id or webhook-timestamp other than its X-Service-* twin`,
          expected: `webhook-id ${h['x-service-event-id'] ?? '(absent)'}, webhook-timestamp ${h['x-service-timestamp'] ?? '(absent)'}`,
          received: `webhook-id ${id}, webhook-timestamp ${timestamp}`,
          fix,
          evidence,
        });
      }
      // The timestamp's format is webhooks.timestamp's concern; sign with what was sent.
      if (!/^\d+$/.test(timestamp.trim()) || !Number.isSafeInteger(Number(timestamp))) continue;
      const expected = signStandardWebhook(secret, id.trim(), Number(timestamp.trim()), Buffer.from(delivery.rawBody, 'utf8'));
      if (!signatures.trim().split(/\s+/).includes(expected)) {
        fail({
          clause: 'ND-STANDARD-WEBHOOKS',
          message: `no webhook-signature entry of a delivery to ${delivery.label} verifies with the signing secret (wrong key, bytes signed other than id.timestamp.body, or hex instead of base64)`,
          expected,
          received: signatures,
          fix,
          evidence,
        });
      }
    }
  },
});
