// Which webhook URLs a service takes, written once: the service's request-time check of
// a webhook_url and its delivery-time check of every address a name resolves to, and the
// conformance proxy, which applies the same rule to a client's webhook_url before it puts
// its own address in its place (and delivers only to what the rule allows), all ask these
// functions. A neutral module because the runner may not import the server.
//
// Production (WH-HTTPS-PUBLIC) takes public hosts only (`isPublicIp`); the
// sandbox takes loopback and private receivers for local development, but never a
// link-local or cloud metadata address (`isLinkLocalOrMetadata`): a sandbox server run
// on a cloud machine for a team must not be a way to read that machine's credentials.
// The ranges come from ipaddr.js, which keeps the IANA special-purpose registries.
import ipaddr from 'ipaddr.js';

/**
 * IPv6 blocks that carry an IPv4 address or are reserved for local use and that
 * ipaddr.js files as plain unicast: the deprecated IPv4-compatible form (`::a.b.c.d`,
 * which the URL parser rewrites to `::7f00:1`) and local-use NAT64.
 */
const ALSO_NOT_PUBLIC = [ipaddr.parseCIDR('::/96'), ipaddr.parseCIDR('64:ff9b:1::/48')];

/**
 * True when `ip` (a literal IPv4 or IPv6 address, brackets allowed) is a public unicast
 * address. Everything else is refused: loopback, private, link-local, carrier-grade NAT,
 * documentation, benchmarking, multicast, reserved, and every IPv4-in-IPv6 form
 * (mapped, compatible, SIIT, NAT64, 6to4, Teredo), whatever IPv4 address it carries.
 */
export function isPublicIp(ip: string): boolean {
  const bare = ip.replace(/^\[|\]$/g, '');
  if (!ipaddr.isValid(bare)) return false;
  const address = ipaddr.parse(bare);
  if (address.range() !== 'unicast') return false;
  return address.kind() === 'ipv4' || !ALSO_NOT_PUBLIC.some((cidr) => (address as ipaddr.IPv6).match(cidr as [ipaddr.IPv6, number]));
}

/** Whether `host` (a URL's hostname) is an IP literal rather than a name. */
export function isIpLiteral(host: string): boolean {
  return ipaddr.isValid(host.replace(/^\[|\]$/g, ''));
}

/**
 * A host name as DNS reads it: lower-cased, without the trailing dots that make it
 * absolute. `localhost..` and `localhost.` are `localhost`: one stripped dot would let
 * a second one carry a local name past every rule below.
 */
export function canonicalName(host: string): string {
  return host.toLowerCase().replace(/\.+$/, '');
}

/** Names that never reach the public internet, whatever DNS says. */
export function isLocalName(host: string): boolean {
  const h = canonicalName(host);
  return (
    h === 'localhost' ||
    h.endsWith('.localhost') ||
    h.endsWith('.local') ||
    h.endsWith('.internal') ||
    h.endsWith('.home.arpa') ||
    !h.includes('.')
  );
}

/**
 * The production rule for a webhook target, at request time and again at delivery:
 * https:// only, and a host that is a public address or a name that is not local (a
 * name's addresses are checked with `isPublicIp` once resolved). Null when it holds.
 */
export function productionRefusal(url: URL): { rule: 'https_required' | 'public_host_required'; reason: string } | null {
  if (url.protocol !== 'https:') return { rule: 'https_required', reason: 'production delivers to https:// only' };
  const host = url.hostname.replace(/^\[|\]$/g, '');
  // A metadata service is never a receiver, even where its address is public (Azure's
  // wire server) or its name is not local (metadata.goog).
  const local = isIpLiteral(host) ? !isPublicIp(host) || isLinkLocalOrMetadata(host) : isLocalName(host) || isMetadataName(host);
  return local ? { rule: 'public_host_required', reason: `host ${host} is not public` } : null;
}

/**
 * Cloud metadata services that are not link-local: AWS's IPv6 endpoint (unique-local),
 * Alibaba's (carrier-grade NAT) and Azure's wire server (a public address). Each hands
 * out the machine's credentials to whoever asks from it.
 */
const METADATA_ADDRESSES = ['fd00:ec2::254', '100.100.100.200', '168.63.129.16'].map((a) => ipaddr.parse(a).toNormalizedString());

/** Names of metadata services, which resolve to the addresses above inside their clouds. */
const METADATA_NAMES = new Set(['metadata', 'metadata.google.internal', 'metadata.goog', 'instance-data', 'instance-data.ec2.internal', 'metadata.azure.internal', 'metadata.tencentyun.com']);

/** The IPv4 address an IPv6 address carries (mapped, compatible, SIIT, NAT64, 6to4), if any. */
function carriedIpv4(address: ipaddr.IPv6): ipaddr.IPv4 | null {
  const bytes = address.toByteArray();
  switch (address.range()) {
    case 'ipv4Mapped':
    case 'rfc6145':
    case 'rfc6052':
      return new ipaddr.IPv4(bytes.slice(12, 16));
    case '6to4':
      return new ipaddr.IPv4(bytes.slice(2, 6));
    default:
      // The deprecated IPv4-compatible form, `::a.b.c.d`.
      return address.match(ALSO_NOT_PUBLIC[0] as [ipaddr.IPv6, number]) ? new ipaddr.IPv4(bytes.slice(12, 16)) : null;
  }
}

/**
 * True when `ip` (brackets allowed) is link-local (IPv4 169.254/16, IPv6 fe80::/10) or a
 * cloud metadata address, also when an IPv6 form carries such an IPv4 address. The
 * sandbox refuses these, where it takes loopback and private receivers.
 */
export function isLinkLocalOrMetadata(ip: string): boolean {
  const bare = ip.replace(/^\[|\]$/g, '');
  if (!ipaddr.isValid(bare)) return false;
  let address = ipaddr.parse(bare);
  if (address.kind() === 'ipv6') address = carriedIpv4(address as ipaddr.IPv6) ?? address;
  return address.range() === 'linkLocal' || METADATA_ADDRESSES.includes(address.toNormalizedString());
}

/** Whether `host` names a cloud metadata service. */
export function isMetadataName(host: string): boolean {
  return METADATA_NAMES.has(canonicalName(host));
}

/**
 * The sandbox's rule for a webhook target, at request time and at delivery: any scheme
 * the URL check lets through, any host but a link-local or metadata one. Null when it holds.
 */
export function sandboxRefusal(url: URL): { rule: 'link_local_refused'; reason: string } | null {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const refused = isIpLiteral(host) ? isLinkLocalOrMetadata(host) : isMetadataName(host);
  return refused ? { rule: 'link_local_refused', reason: `host ${host} is link-local or a metadata service` } : null;
}

/**
 * The rule for each address a webhook host's name resolves to, at delivery: never a
 * link-local or metadata address, and in production only a public one. Every address
 * must pass, so that a name that also points where it may not is refused whole. Null
 * when `ip` may be connected to.
 */
export function resolvedAddressRefusal(ip: string, mode: ServiceMode): string | null {
  if (isLinkLocalOrMetadata(ip)) return 'is link-local or a metadata service';
  return mode === 'production' && !isPublicIp(ip) ? 'is not public' : null;
}

/** A refused webhook_url as a 422 names it: the field, the rule broken and what holding means. */
export interface WebhookUrlRefusal {
  field: string;
  rule: string;
  message: string;
}

export type ServiceMode = 'sandbox' | 'production';

/**
 * Request-time check of a webhook_url beyond its schema (WH-HTTPS-PUBLIC). Production
 * demands https:// and a host that is not local; names are resolved and checked again
 * at delivery time. Sandbox mode, for local development, accepts http://, loopback and
 * private hosts, but never a link-local or cloud metadata one (checked again at delivery).
 */
export function checkWebhookUrl(raw: string, mode: ServiceMode, field = 'webhook_url'): WebhookUrlRefusal | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { field, rule: 'format', message: 'must be an absolute URL' };
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    return { field, rule: 'https_required', message: 'must use https://' };
  }
  if (url.username || url.password) {
    return { field, rule: 'format', message: 'must not carry credentials' };
  }
  if (mode === 'sandbox') {
    const refused = sandboxRefusal(url);
    return refused ? { field, rule: refused.rule, message: 'must not name a link-local or cloud metadata host' } : null;
  }
  const refused = productionRefusal(url);
  if (!refused) return null;
  return { field, rule: refused.rule, message: refused.rule === 'https_required' ? 'must use https://' : 'must name a public host' };
}
