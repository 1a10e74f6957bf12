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
  ['https://[fd00::1]/conformance', 'its host is IPv6 unique-local'],
  ['https://[fe80::1]/conformance', 'its host is IPv6 link-local'],
  // IPv4 inside IPv6: every form can reach loopback or the metadata service. The URL
  // parser rewrites some of them (::127.0.0.1 becomes ::7f00:1), so a check by pattern
  // on the dotted spelling misses them.
  ['https://[::ffff:127.0.0.1]/conformance', 'its host is IPv4-mapped loopback'],
  ['https://[::127.0.0.1]/conformance', 'its host is IPv4-compatible loopback'],
  ['https://[::ffff:0:a9fe:a9fe]/conformance', 'its host is SIIT-translated link-local (cloud metadata)'],
  ['https://[64:ff9b::a9fe:a9fe]/conformance', 'its host is NAT64 of link-local (cloud metadata)'],
  ['https://[2002:7f00:1::1]/conformance', 'its host is 6to4 of loopback'],
  ['https://[2001:0:4136:e378:8000:63bf:80ff:fffe]/conformance', 'its host is a Teredo address'],
];

export default defineCheck({
  id: 'webhooks.https-public-only',
  title: 'In production, webhook_url must be https:// on a public host',
  asserts: 'In production, a webhook_url that is http://, or https:// on a loopback, private, link-local, carrier-grade NAT or unique-local host, or on an IPv6 address that carries IPv4 (mapped, compatible, SIIT, NAT64, 6to4, Teredo), is refused as invalid.',
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
