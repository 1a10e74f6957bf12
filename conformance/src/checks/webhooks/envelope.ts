import { CONTRACT_ONLY, defineCheck } from '../../check.ts';
import { arrivals, bodyOf, describeDelivery } from '../../observe/arrivals.ts';
import { fail, skip } from '../../outcome.ts';

const SCHEMA: Record<string, string> = {
  'avatar.ready': 'AvatarReadyEvent',
  'avatar.failed': 'AvatarFailedEvent',
  'avatar_video.ready': 'AvatarVideoReadyEvent',
  'avatar_video.failed': 'AvatarVideoFailedEvent',
};

export default defineCheck({
  id: 'webhooks.envelope',
  title: 'Events follow the documented envelope {id, object, type, api_version, created_at, data.object}',
  asserts: 'Contract only: every event is {id, object: "event", type, api_version, created_at, data.object} and its id equals X-Service-Event-Id.',
  clauses: [],
  decisions: ['ND-ENVELOPE'],
  profiles: CONTRACT_ONLY,
  needs: ['receiver'],
  async run(ctx) {
    await arrivals(ctx);
    const deliveries = ctx.receiver!.deliveries().filter((d) => d.label !== 'refused-402' && !d.label.startsWith('refused-429'));
    if (deliveries.length === 0) skip('no webhook arrived');
    for (const delivery of deliveries) {
      const body = bodyOf(delivery);
      const schema = SCHEMA[String(body?.type)];
      if (!schema) {
        fail({ clause: 'ND-ENVELOPE', message: `an event has type ${JSON.stringify(body?.type)}`, expected: Object.keys(SCHEMA).join(', '), received: String(body?.type), evidence: [describeDelivery(delivery)] });
      }
      const errors = ctx.validator.validateSchema(schema, body);
      if (errors.length) {
        fail({ clause: 'ND-ENVELOPE', message: `a ${String(body?.type)} event does not match ${schema}`, expected: schema, received: errors.join('; '), fix: 'Send the documented envelope with data.object as GET returns it.', evidence: [describeDelivery(delivery)] });
      }
      if (delivery.headers['x-service-event-id'] !== body?.id) {
        fail({ clause: 'ND-ENVELOPE', message: 'the event body id differs from X-Service-Event-Id', expected: String(delivery.headers['x-service-event-id']), received: String(body?.id), evidence: [describeDelivery(delivery)] });
      }
    }
  },
});
