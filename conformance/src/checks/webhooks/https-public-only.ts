import { defineCheck } from '../../check.ts';
import { expectInvalid } from '../../expect.ts';

/** Addresses a production service must refuse as webhook targets, with why. */
const REFUSED: [string, string][] = [
  ['http://hooks.example.com/conformance', 'it is http://, not https://'],
  ['https://127.0.0.1/conformance', 'its host is loopback'],
  ['https://localhost/conformance', 'its host is localhost'],
  ['https://[::1]/conformance', 'its host is IPv6 loopback'],
  ['https://10.20.30.40/conformance', 'its host is private (10/8)'],
  ['https://192.168.1.10/conformance', 'its host is private (192.168/16)'],
  ['https://169.254.169.254/latest/meta-data', 'its host is link-local (cloud metadata)'],
  ['https://100.64.0.1/conformance', 'its host is carrier-grade NAT (100.64/10)'],
];

export default defineCheck({
  id: 'webhooks.https-public-only',
  title: 'In production, webhook_url must be https:// on a public host',
  asserts: 'In production, a webhook_url that is http://, or https:// on a loopback, private, link-local or carrier-grade NAT host, is refused as invalid.',
  clauses: ['WH-HTTPS-PUBLIC'],
  decisions: ['ND-ERRORS'],
  profiles: ['production'],
  lane: 'requests',
  async run(ctx) {
    for (const [url, why] of REFUSED) {
      await expectInvalid(ctx, {
        clause: 'WH-HTTPS-PUBLIC',
        what: `webhook_url is ${url} (${why})`,
        path: '/v1/avatars',
        body: { type: 'prompt', name: 'Conformance webhook URL', prompt: 'A presenter that should never be generated.', webhook_url: url },
        field: 'webhook_url',
      });
    }
  },
});
