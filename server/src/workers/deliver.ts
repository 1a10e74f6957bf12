// One HTTP attempt at a webhook: bounded in time and in what it reads, no redirects,
// only to addresses the mode allows (public ones in production; any but link-local and
// metadata ones in the sandbox), connecting to the address it checked. A failure is
// told as its category (domain/attemptErrors.ts); the network's own words, which name
// addresses and ports, go to the operator's log only.
import { lookup as dnsLookup } from 'node:dns';
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { canonicalName, productionRefusal, resolvedAddressRefusal, sandboxRefusal } from '../domain/addresses.ts';
import type { AttemptErrorCode } from '../domain/attemptErrors.ts';
import type { ServiceMode } from '../domain/webhookUrl.ts';

/** Bytes of a receiver's answer read at most; the rest is discarded unread. */
export const MAX_RESPONSE_BYTES = 64 * 1024;

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a host name to every address it has. Injectable, so tests control DNS. */
export type Resolver = (host: string) => Promise<ResolvedAddress[]>;

export const systemResolver: Resolver = (host) =>
  new Promise((resolve, reject) => {
    dnsLookup(host, { all: true, verbatim: true }, (error, addresses) => {
      if (error) reject(error);
      else resolve(addresses.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 })));
    });
  });

/** Receivers whose connections are kept open between deliveries. */
const MAX_KEPT_AGENTS = 256;
const agents = new Map<string, HttpAgent>();

/**
 * One keep-alive agent per receiver and checked address: deliveries to a receiver reuse
 * its connections instead of opening one each (most of a delivery's cost), and a kept
 * socket is always one that was opened to an address that passed the checks.
 */
function agentFor(url: URL, address: ResolvedAddress): HttpAgent {
  const key = `${url.protocol}//${url.host}|${address.address}`;
  let agent = agents.get(key);
  if (agent) {
    agents.delete(key); // re-inserted below: the map's order is least recently used first
  } else {
    // No socket limit of its own: the dispatcher bounds the attempts in flight to a
    // destination (WEBHOOK_DESTINATION_CONCURRENCY), and an attempt must never queue
    // here while its timeout runs.
    const options = { keepAlive: true, maxFreeSockets: 8, timeout: 30_000 };
    agent = url.protocol === 'https:' ? new HttpsAgent(options) : new HttpAgent(options);
    if (agents.size >= MAX_KEPT_AGENTS) {
      const [oldest, old] = agents.entries().next().value!;
      agents.delete(oldest);
      old.destroy();
    }
  }
  agents.set(key, agent);
  return agent;
}

/**
 * `error` is the failure's category, what the account is shown; `detail` is what
 * happened in the network's words, for the operator's log only. `attempted` is false
 * when no request was sent (the URL is invalid, or refused before any connection).
 */
export type AttemptResult = { ok: true; status: number } | { ok: false; status: number | null; error: AttemptErrorCode; detail: string; attempted: boolean };

/** The category of an error of the request: what the account can act on. */
export function errorCategory(error: NodeJS.ErrnoException): AttemptErrorCode {
  const code = error.code ?? '';
  if (code === 'ECONNREFUSED') return 'connection_refused';
  if (code === 'ETIMEDOUT') return 'timeout';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EAI_NONAME' || code === 'ENODATA') return 'name_not_found';
  if (code === 'EPROTO' || /CERT|SSL|TLS/.test(code) || /certificate|SSL|TLS/i.test(error.message)) return 'tls_failure';
  if (code.startsWith('HPE_') || error.message === 'Parse Error') return 'invalid_response';
  return 'connection_failed';
}

export interface DeliveryOptions {
  mode: ServiceMode;
  timeoutMs: number;
  resolve: Resolver;
}

/** The address to connect to, or why the URL may not be delivered to. */
async function pickAddress(url: URL, options: DeliveryOptions): Promise<{ address: ResolvedAddress } | { refused: string } | { notFound: string }> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  // The same rule as at request time: a URL accepted then and refused now means the rule changed.
  const refused = options.mode === 'production' ? productionRefusal(url) : sandboxRefusal(url);
  if (refused) return { refused: refused.reason };
  const literal = isIP(host);
  // Resolved as one absolute name however many dots end it, as the request-time check read it.
  const addresses = literal ? [{ address: host, family: literal as 4 | 6 }] : await options.resolve(canonicalName(host));
  if (addresses.length === 0) return { notFound: `host ${host} has no address` };
  // Every address must pass: a name that also points where it may not is refused whole.
  const inside = addresses.map((a) => ({ address: a.address, why: resolvedAddressRefusal(a.address, options.mode) })).find((a) => a.why !== null);
  if (inside) return { refused: `host ${host} resolves to ${inside.address}, which ${inside.why}` };
  return { address: addresses[0]! };
}

/**
 * POSTs `body` to `url` once. Any 2xx is success; a redirect, another status, a
 * timeout or a refused address is a failure with a reason for the logs.
 */
export async function deliverOnce(target: string, body: string, headers: Record<string, string>, options: DeliveryOptions): Promise<AttemptResult> {
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    return { ok: false, status: null, error: 'refused_by_policy', detail: 'invalid URL', attempted: false };
  }
  let picked;
  try {
    picked = await pickAddress(url, options);
  } catch (error) {
    return { ok: false, status: null, error: 'name_not_found', detail: `DNS lookup failed: ${(error as Error).message}`, attempted: true };
  }
  if ('refused' in picked) return { ok: false, status: null, error: 'refused_by_policy', detail: `refused: ${picked.refused}`, attempted: false };
  if ('notFound' in picked) return { ok: false, status: null, error: 'name_not_found', detail: picked.notFound, attempted: true };
  const { address } = picked;
  // Hand the socket the address that was checked, so a second DNS answer cannot send
  // the connection elsewhere (no DNS-rebinding window). TLS still verifies the host name.
  const lookup: LookupFunction = (_host, opts, callback) => {
    if ((opts as { all?: boolean }).all) (callback as (e: null, a: ResolvedAddress[]) => void)(null, [address]);
    else callback(null, address.address, address.family);
  };
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;

  return new Promise<AttemptResult>((resolve) => {
    let settled = false;
    const finish = (result: AttemptResult, reusable = false) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      // A socket whose answer was read to the end goes back to the agent; any other is closed.
      if (!reusable) req.destroy();
      resolve(result);
    };
    const req = send(url, {
      method: 'POST',
      headers: { ...headers, 'Content-Length': Buffer.byteLength(body) },
      lookup,
      agent: agentFor(url, address),
      servername: isIP(url.hostname.replace(/^\[|\]$/g, '')) ? undefined : url.hostname,
    });
    const timer = setTimeout(() => finish({ ok: false, status: null, error: 'timeout', detail: `no answer within ${options.timeoutMs} ms`, attempted: true }), options.timeoutMs);
    req.on('error', (error) => finish({ ok: false, status: null, error: errorCategory(error), detail: error.message, attempted: true }));
    req.on('response', (res: IncomingMessage) => {
      const status = res.statusCode ?? 0;
      let read = 0;
      res.on('data', (chunk: Buffer) => {
        read += chunk.length;
        if (read > MAX_RESPONSE_BYTES) res.destroy(); // we only need the status; never buffer a huge answer
      });
      const done = (complete: boolean) =>
        finish(
          status >= 200 && status < 300
            ? { ok: true, status }
            : { ok: false, status, error: 'receiver_status', detail: status >= 300 && status < 400 ? `redirect ${status} not followed` : `status ${status}`, attempted: true },
          complete,
        );
      res.on('end', () => done(true));
      res.on('close', () => done(false));
      res.on('error', () => done(false));
    });
    req.end(body);
  });
}
