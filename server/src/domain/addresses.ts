// Which hosts a production webhook may target (WH-HTTPS-PUBLIC), written once: the
// request-time check of a literal host and the delivery-time check of every address a
// name resolves to both ask `isPublicIp`. The ranges come from ipaddr.js, which keeps
// the IANA special-purpose registries; we only decide that nothing but its plain
// `unicast` range is public.
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

/** Names that never reach the public internet, whatever DNS says. */
export function isLocalName(host: string): boolean {
  const h = host.toLowerCase().replace(/\.$/, '');
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
  const local = isIpLiteral(host) ? !isPublicIp(host) : isLocalName(host);
  return local ? { rule: 'public_host_required', reason: `host ${host} is not public` } : null;
}
