// The proxy itself: clients call it instead of the service, and it passes every exchange
// on unchanged (the body streamed as it comes, every header but the hop-by-hop ones),
// recording what it saw for the checks. Two things it does besides: a create request's
// webhook_url is pointed at the proxy, so that the service's deliveries pass through it
// on their way to the client's receiver (byte for byte, headers and all, and the
// receiver's answer back); and with --inject-429 it answers a share of each key's
// requests itself with a 429, which the service never sees.
//
// Whatever a client sends, the proxy holds a bounded amount of it: a create's body is
// read to the service's own limit and no further (a longer one goes to the service cut
// just past the limit, which the service refuses with its 413 as it would the whole,
// and the rest is read and dropped), every other body streams, and the record keeps
// bounded excerpts with their true lengths. A client's webhook_url is routed through the
// proxy only when the service's rule for its mode allows it (contract/webhookUrl.ts);
// any other goes to the service as the client wrote it, so the client gets the
// service's own refusal, and the proxy never delivers to it.
import { CONTRACT_LIMITS } from '../options.ts';
import { randomBytes } from 'node:crypto';
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { Agent as HttpAgent, createServer, request as httpRequest, type IncomingMessage, type OutgoingHttpHeaders, type ServerResponse } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { AddressInfo } from 'node:net';
import { isDeepStrictEqual } from 'node:util';
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';
import { MAX_JSON_BODY_BYTES } from '../../../contract/bodyLimit.ts';
import { formatRateLimit, formatRateLimitPolicy } from '../../../contract/rateLimitFields.ts';
import { canonicalName, checkWebhookUrl, resolvedAddressRefusal, type ServiceMode } from '../../../contract/webhookUrl.ts';
import type { ContractValidator } from '../contract.ts';
import type { Shape } from '../implementation/shape.ts';
import type { Bucket } from '../pacer.ts';
import { answerConnectionErrors, hostRefusal, proxyProblem, refuse } from './refusals.ts';
import { Traffic, type Seen, type SeenDelivery } from './traffic.ts';

/** Where the service delivers the webhooks the proxy routes; the rest of the path is the webhook's token. */
export const WEBHOOK_PATH = '/__conformance/webhooks/';
/** The smallest wait the header can say in whole seconds: a client's wait is measured against it, and it costs a correct client least. */
export const INJECTED_RETRY_AFTER_SECONDS = 1;
/** The contract's burst limits (each bucket's shortest window), for an injected 429 on a key whose own limit the service has not shown yet. */
const SOURCE_BURST_LIMITS: Record<Bucket, number> = { generation: CONTRACT_LIMITS.generation[0]!, read: CONTRACT_LIMITS.read[0]! };
/**
 * Answers kept for judging: a record, an event, a problem, what the checks read. A
 * longer body (a video file, a long page of a list) is passed on and counted, not kept,
 * so that the record of a long run grows by a bounded excerpt per exchange.
 */
const KEPT_BODY_BYTES = 64 * 1024;
/**
 * A create's body is kept whole in the record up to this. A longer one (up to the
 * service's limit) keeps an excerpt: its top-level members, long strings cut with their
 * length, which is what the checks read (an avatar_id) and a report shows. Refused
 * creates are recorded too, and the service's rate limits do not bound those.
 */
const KEPT_REQUEST_BYTES = 16 * 1024;
/** A string of a kept excerpt is cut here. */
const EXCERPT_CHARS = 200;
/** A webhook delivery the service sends is read whole (its signature is over its bytes) up to this: the runner's receiver's own limit. */
const MAX_DELIVERY_BYTES = 1024 * 1024;
/** How long a receiver may take to answer a routed delivery before the proxy gives up on it (longer than any sender waits). */
const RECEIVER_TIMEOUT_MS = 60_000;

// RFC 9110 §7.6.1: these describe one connection and are never passed on. Host is set
// to the next hop's own.
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-authenticate', 'proxy-authorization', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'host']);

export interface ProxyOptions {
  /** The service: scheme, host, port and any base path. */
  upstream: string;
  host?: string;
  port: number;
  /** The address the service must call for webhooks, when it cannot call the proxy's own (a service that accepts only public HTTPS). */
  publicUrl?: string;
  shape: Shape;
  validator: ContractValidator;
  /** The share of each key's rate-limited requests answered with a 429 by the proxy itself, 0 to below 1. */
  inject429?: number;
  /**
   * The service's mode, whose webhook URL rule a client's webhook_url must keep to be
   * routed through the proxy (contract/webhookUrl.ts). Default sandbox.
   */
  serviceMode?: ServiceMode;
  /** Resolves a receiver's host at delivery (default: the system's resolver); every address is held to the rule. */
  resolve?: (host: string) => Promise<LookupAddress[]>;
  now?: () => number;
}

export interface RunningProxy {
  url: string;
  /** Where the service is told to deliver webhooks. */
  webhookBase: string;
  traffic: Traffic;
  close(): Promise<void>;
}

interface Hook {
  receiver: string;
  key: string | undefined;
  createSeq: number;
}

export async function startProxy(options: ProxyOptions): Promise<RunningProxy> {
  const now = options.now ?? Date.now;
  const upstream = new URL(options.upstream);
  const basePath = upstream.pathname.replace(/\/+$/, '');
  const traffic = new Traffic();
  const hooks = new Map<string, Hook>();
  const injector = new Injector(options.inject429 ?? 0);
  const lastLimit = new Map<string, number>();
  const agents = { http: new HttpAgent({ keepAlive: true }), https: new HttpsAgent({ keepAlive: true }) };
  const { shape, validator } = options;
  const serviceMode = options.serviceMode ?? 'sandbox';
  const resolve = options.resolve ?? ((host: string) => new Promise<LookupAddress[]>((ok, fail) => dnsLookup(host, { all: true }, (error, addresses) => (error ? fail(error) : ok(addresses)))));
  let webhookBase = '';

  /** Whether the service takes this webhook_url: the contract's schema of it and the mode's rule. */
  const routable = (receiver: string) => validator.validateSchema('WebhookUrl', receiver).length === 0 && checkWebhookUrl(receiver, serviceMode) === null;

  // A tunnel in front of the proxy may keep the path of --public-url in what it passes on.
  const publicPath = options.publicUrl ? new URL(options.publicUrl).pathname.replace(/\/+$/, '') : '';
  const webhookPrefix = (url: string) => [WEBHOOK_PATH, `${publicPath}${WEBHOOK_PATH}`].find((prefix) => url.startsWith(prefix));

  // Host is checked below as the service checks it, with a problem rather than Node's bare 400.
  const server = createServer({ requireHostHeader: false }, (req, res) => {
    const arrivedAt = now();
    const url = req.url ?? '/';
    const prefix = webhookPrefix(url);
    const work = prefix ? deliver(req, res, url.slice(prefix.length), arrivedAt) : forward(req, res, url, arrivedAt);
    work.catch((error: unknown) => {
      if (res.destroyed) return;
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
      res.end(`conformance proxy: ${error instanceof Error ? error.message : String(error)}\n`);
    });
  });
  answerConnectionErrors(server);
  // A client that half-closes once its request is sent still gets its answer: the
  // service, answering from memory, usually writes it before it reads the end, where the
  // proxy must first ask the service, and Node would otherwise close the connection at
  // the client's end, its answer unwritten.
  (server as typeof server & { httpAllowHalfOpen: boolean }).httpAllowHalfOpen = true;

  async function forward(req: IncomingMessage, res: ServerResponse, url: string, arrivedAt: number): Promise<void> {
    const method = req.method ?? 'GET';
    const token = tokenOf(req, shape);
    const key = token === undefined ? undefined : traffic.label(token);
    const match = validator.match(method, url);
    const seen: Seen = {
      seq: traffic.exchanges.length + 1,
      key,
      method,
      path: url,
      operationId: match?.operationId,
      bucket: match?.bucket,
      requestJson: undefined,
      arrivedAt,
      answeredAt: arrivedAt,
      status: 0,
      responseHeaders: {},
      responseJson: undefined,
      responseText: '',
      injected: false,
    };
    traffic.exchanges.push(seen);

    const badHost = hostRefusal(req);
    if (badHost) {
      const problem = proxyProblem('malformed_request', badHost, url.split('?')[0]!);
      seen.refusedByProxy = 'malformed_request';
      seen.status = problem.status;
      seen.responseHeaders = lowerHeaders(problem.headers);
      seen.responseText = problem.body;
      seen.responseJson = JSON.parse(problem.body);
      seen.answeredAt = now();
      return refuse(res, problem);
    }

    if (key !== undefined && match?.bucket && injector.take(key)) {
      req.resume();
      return inject(res, seen, lastLimit.get(`${key}:${match.bucket}`) ?? SOURCE_BURST_LIMITS[match.bucket]);
    }

    const kind = method === 'POST' && match?.operationId === 'createAvatar' ? 'avatar' : method === 'POST' && match?.operationId === 'createAvatarVideo' ? 'avatar_video' : undefined;
    // A create is read to point its webhook_url at the proxy, up to the service's limit;
    // everything else streams.
    let body: Buffer | undefined;
    if (kind) {
      let read: Awaited<ReturnType<typeof readBounded>>;
      try {
        read = await readBounded(req, MAX_JSON_BODY_BYTES);
      } catch (error) {
        seen.proxyError = `the client's body did not arrive: ${error instanceof Error ? error.message : String(error)}`;
        seen.answeredAt = now();
        res.destroy();
        return;
      }
      seen.requestBytes = read.size;
      if (read.over) {
        // The service refuses a body past its limit whatever follows the limit: it gets the
        // bytes up to one past it, and answers as it would the whole (its 413, or the 401,
        // 429 or 415 it judges first), while the rest is counted and dropped. Draining
        // keeps the connection usable, as the service keeps it.
        body = read.bytes;
        req.on('data', (chunk: Buffer) => (seen.requestBytes! += chunk.length));
        req.on('error', () => undefined); // a client that leaves mid-body ends only its own drain
        req.resume();
      } else {
        const rewritten = rewriteWebhookUrl(read.bytes, (receiver) => {
          // A URL the service's rule refuses goes on as written: the client gets the
          // service's own refusal, and the proxy never delivers to it.
          if (!routable(receiver)) return undefined;
          const id = randomBytes(12).toString('hex');
          hooks.set(id, { receiver, key, createSeq: seen.seq });
          return `${webhookBase}${id}`;
        });
        seen.requestJson = read.size <= KEPT_REQUEST_BYTES ? rewritten.json : excerptOf(rewritten.json);
        body = rewritten.body;
      }
    }

    const headers = passOn(req.rawHeaders, body === undefined ? [] : ['content-length']);
    headers.push('Host', upstream.host);
    if (body !== undefined) headers.push('Content-Length', String(body.length));
    const secure = upstream.protocol === 'https:';
    const up = (secure ? httpsRequest : httpRequest)({
      protocol: upstream.protocol,
      hostname: upstream.hostname,
      port: upstream.port || (secure ? 443 : 80),
      method,
      path: basePath + url,
      headers: headers as unknown as OutgoingHttpHeaders,
      agent: secure ? agents.https : agents.http,
    });
    // A client that goes away takes its request to the service with it.
    res.on('close', () => {
      if (!res.writableFinished) up.destroy();
    });
    await new Promise<void>((resolve) => {
      up.on('response', (answer) => {
        // The client's side already has its answer (its body was not HTTP, and the
        // proxy refused it as the service would): this one has nowhere to go.
        if (res.headersSent || res.destroyed) {
          answer.resume();
          up.destroy();
          resolve();
          return;
        }
        seen.answeredAt = now();
        seen.status = answer.statusCode ?? 0;
        seen.responseHeaders = lowerHeaders(answer.headers);
        res.writeHead(seen.status, answer.statusMessage, passOn(answer.rawHeaders) as unknown as OutgoingHttpHeaders);
        const kept: Buffer[] = [];
        let size = 0;
        answer.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size <= KEPT_BODY_BYTES) kept.push(chunk);
          else kept.length = 0;
        });
        answer.pipe(res);
        answer.on('end', () => {
          seen.responseBytes = size;
          if (size <= KEPT_BODY_BYTES) readBody(seen, Buffer.concat(kept));
          if (key !== undefined && match?.bucket) {
            const limit = Number(seen.responseHeaders['ratelimit-limit']);
            if (Number.isInteger(limit) && limit > 0) lastLimit.set(`${key}:${match.bucket}`, limit);
          }
          if (kind && shape.isCreated(kind, seen.status)) {
            const id = shape.createdId(kind, seen.responseJson);
            if (id) traffic.created.push({ kind, id, key, at: seen.answeredAt });
          }
          resolve();
        });
        answer.on('error', () => resolve());
      });
      up.on('error', (error) => {
        seen.proxyError = error.message;
        seen.answeredAt = now();
        if (!res.headersSent) {
          seen.status = 502;
          res.writeHead(502, { 'content-type': 'text/plain' });
          res.end(`conformance proxy: the service at ${upstream.origin} could not be reached: ${error.message}\n`);
        } else res.destroy();
        resolve();
      });
      if (body !== undefined) up.end(body);
      else req.pipe(up);
    });
  }

  /** A 429 of a closed window, as the service would answer it, without asking the service. */
  function inject(res: ServerResponse, seen: Seen, limit: number): void {
    const wait = String(INJECTED_RETRY_AFTER_SECONDS);
    const body = JSON.stringify({
      type: 'about:blank',
      title: 'Too Many Requests',
      status: 429,
      code: 'rate_limit_exceeded',
      detail: `This 429 was answered by the conformance proxy (--inject-429), not by the service: wait ${wait} s before trying again.`,
    });
    const headers: Record<string, string> = {
      'content-type': 'application/problem+json',
      'retry-after': wait,
      'ratelimit-limit': String(limit),
      'ratelimit-remaining': '0',
      'ratelimit-reset': wait,
      'x-ratelimit-limit': String(limit),
      'x-ratelimit-remaining': '0',
      'x-ratelimit-reset': wait,
      // The IETF draft's fields, as the reference sends them beside the trio (ND-RATELIMIT-FIELDS);
      // the window's length is not known here, and the draft leaves w optional.
      'ratelimit-policy': formatRateLimitPolicy([{ name: 'injected', quota: limit }]),
      ratelimit: formatRateLimit({ name: 'injected', remaining: 0, resetSeconds: INJECTED_RETRY_AFTER_SECONDS }),
    };
    seen.injected = true;
    seen.status = 429;
    seen.responseHeaders = headers;
    seen.responseText = body;
    seen.responseJson = JSON.parse(body);
    seen.answeredAt = now();
    res.writeHead(429, { ...headers, 'content-length': String(Buffer.byteLength(body)) });
    res.end(body);
  }

  async function deliver(req: IncomingMessage, res: ServerResponse, rest: string, arrivedAt: number): Promise<void> {
    const hook = hooks.get(rest.split(/[/?#]/)[0] ?? '');
    if (!hook) {
      req.resume();
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('conformance proxy: no webhook of this run has this address\n');
      return;
    }
    // Read whole: its signature is over these exact bytes, which the checks verify.
    const read = await readBounded(req, MAX_DELIVERY_BYTES);
    if (read.over) {
      req.resume();
      res.writeHead(413, { 'content-type': 'text/plain' });
      res.end(`conformance proxy: a webhook delivery is read up to ${MAX_DELIVERY_BYTES} bytes; this one is longer\n`);
      return;
    }
    const rawBody = read.bytes;
    const delivery: SeenDelivery = {
      seq: traffic.deliveries.length + 1,
      key: hook.key,
      receiver: hook.receiver,
      createSeq: hook.createSeq,
      arrivedAt,
      headers: lowerHeaders(req.headers),
      rawBody,
      json: parseJson(rawBody.toString('utf8')),
      receiverStatus: undefined,
    };
    traffic.deliveries.push(delivery);
    const target = new URL(hook.receiver);
    const secure = target.protocol === 'https:';
    const headers = passOn(req.rawHeaders, ['content-length']);
    headers.push('Host', target.host, 'Content-Length', String(rawBody.length));
    await new Promise<void>((done) => {
      const up = (secure ? httpsRequest : httpRequest)({
        protocol: target.protocol,
        hostname: target.hostname,
        port: target.port || (secure ? 443 : 80),
        method: req.method ?? 'POST',
        path: `${target.pathname}${target.search}`,
        headers: headers as unknown as OutgoingHttpHeaders,
        timeout: RECEIVER_TIMEOUT_MS,
        // A name is held to the rule again once resolved, every address of it, as the
        // service holds its own deliveries (no name that points at a metadata service).
        lookup: (host, _options, callback) => {
          resolve(canonicalName(host)).then(
            (addresses) => {
              const inside = addresses.map((a) => ({ ...a, why: resolvedAddressRefusal(a.address, serviceMode) })).find((a) => a.why !== null);
              if (inside) callback(Object.assign(new Error(`host ${host} resolves to ${inside.address}, which ${inside.why}: not delivered`), { code: 'EREFUSED' }), '', 4);
              else if (addresses.length === 0) callback(Object.assign(new Error(`host ${host} has no address`), { code: 'ENOTFOUND' }), '', 4);
              else if ((_options as { all?: boolean }).all) (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, [addresses[0]!]);
              else callback(null, addresses[0]!.address, addresses[0]!.family);
            },
            (error: Error) => callback(error as NodeJS.ErrnoException, '', 4),
          );
        },
      });
      up.on('timeout', () => up.destroy(new Error(`no answer within ${RECEIVER_TIMEOUT_MS / 1000} s`)));
      up.on('response', (answer) => {
        delivery.receiverStatus = answer.statusCode;
        res.writeHead(answer.statusCode ?? 502, answer.statusMessage, passOn(answer.rawHeaders) as unknown as OutgoingHttpHeaders);
        answer.pipe(res);
        answer.on('end', done);
        answer.on('error', () => done());
      });
      up.on('error', (error) => {
        // The service sees what a sender sees when a receiver is down, and retries as it would.
        if (!res.headersSent) {
          res.writeHead(502, { 'content-type': 'text/plain' });
          res.end(`conformance proxy: the receiver could not be reached: ${error.message}\n`);
        } else res.destroy();
        done();
      });
      up.end(rawBody);
    });
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host ?? '127.0.0.1', () => resolve());
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `http://${host}:${address.port}`;
  webhookBase = `${(options.publicUrl ?? url).replace(/\/+$/, '')}${WEBHOOK_PATH}`;

  return {
    url,
    webhookBase,
    traffic,
    close: () =>
      new Promise<void>((resolve) => {
        agents.http.destroy();
        agents.https.destroy();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** Answers a share of each key's requests, spread evenly over them (every fourth for 0.25), so that a run sees the same ones again. */
export class Injector {
  readonly #share: number;
  readonly #counts = new Map<string, number>();
  constructor(share: number) {
    this.#share = share;
  }
  take(key: string): boolean {
    if (this.#share <= 0) return false;
    const n = (this.#counts.get(key) ?? 0) + 1;
    this.#counts.set(key, n);
    return Math.floor(n * this.#share + 1e-9) > Math.floor((n - 1) * this.#share + 1e-9);
  }
}

/** The key a request presents, where the implementation profile says it goes. */
function tokenOf(req: IncomingMessage, shape: Shape): string | undefined {
  const { header, scheme } = shape.profile.auth;
  const raw = req.headers[header.toLowerCase()];
  const value = (Array.isArray(raw) ? raw[0] : raw)?.trim();
  if (!value) return undefined;
  if (!scheme) return value;
  const prefix = `${scheme.toLowerCase()} `;
  return value.toLowerCase().startsWith(prefix) ? value.slice(prefix.length).trim() || undefined : value;
}

/**
 * Points a create request's webhook_url at the proxy. Only the value's bytes change:
 * the rest of the body goes on as the client wrote it. A body whose member cannot be
 * found that way (escaped names, say) is written again whole.
 */
export function rewriteWebhookUrl(raw: Buffer, route: (receiver: string) => string | undefined): { body: Buffer; json: unknown } {
  const text = raw.toString('utf8');
  const json = parseJson(text);
  if (typeof json !== 'object' || json === null || Array.isArray(json)) return { body: raw, json };
  const receiver = (json as Record<string, unknown>).webhook_url;
  if (typeof receiver !== 'string') return { body: raw, json };
  const replacement = route(receiver);
  // Not routed: the body goes on as the client wrote it.
  if (replacement === undefined) return { body: raw, json };
  const wanted = { ...(json as Record<string, unknown>), webhook_url: replacement };
  for (const match of text.matchAll(/("webhook_url"\s*:\s*)"(?:[^"\\]|\\.)*"/g)) {
    const candidate = `${text.slice(0, match.index)}${match[1]}${JSON.stringify(replacement)}${text.slice(match.index + match[0].length)}`;
    if (isDeepStrictEqual(parseJson(candidate), wanted)) return { body: Buffer.from(candidate, 'utf8'), json };
  }
  return { body: Buffer.from(JSON.stringify(wanted), 'utf8'), json };
}

/** A body's top-level members, long strings cut with their length and nested values left out: bounded, whatever the body. */
export function excerptOf(json: unknown): unknown {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) return undefined;
  const cut = (text: string) => (text.length > EXCERPT_CHARS ? `${text.slice(0, EXCERPT_CHARS)}… (${text.length} characters)` : text);
  const members = Object.entries(json as Record<string, unknown>);
  return Object.fromEntries(
    members.slice(0, 50).map(([name, value]) => [cut(name), typeof value === 'string' ? cut(value) : typeof value === 'object' && value !== null ? '(not kept)' : value]),
  );
}

/** Raw headers (name, value, name, value, …) without the hop-by-hop ones, those the Connection header names, and `drop`. */
function passOn(raw: readonly string[], drop: readonly string[] = []): string[] {
  const named = new Set(drop);
  for (let i = 0; i < raw.length; i += 2) {
    if (raw[i]!.toLowerCase() === 'connection') for (const name of raw[i + 1]!.split(',')) named.add(name.trim().toLowerCase());
  }
  const out: string[] = [];
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    if (!HOP_BY_HOP.has(name) && !named.has(name)) out.push(raw[i]!, raw[i + 1]!);
  }
  return out;
}

function lowerHeaders(headers: IncomingMessage['headers']): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) if (value !== undefined) out[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  return out;
}

/**
 * Reads a body up to `limit` bytes. Past it, reading stops (the stream is paused, the
 * rest left unread) and `bytes` holds the first `limit` + 1: enough for a reader that
 * refuses past the limit to refuse it, never more than one chunk beyond it in memory.
 */
function readBounded(req: IncomingMessage, limit: number): Promise<{ bytes: Buffer; size: number; over: boolean }> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const stop = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('close', onClose);
      req.off('error', reject);
    };
    const onData = (chunk: Buffer) => {
      chunks.push(chunk);
      size += chunk.length;
      if (size <= limit) return;
      stop();
      req.pause();
      resolve({ bytes: Buffer.from(Buffer.concat(chunks).subarray(0, limit + 1)), size, over: true });
    };
    const onEnd = () => {
      stop();
      resolve({ bytes: Buffer.concat(chunks), size, over: false });
    };
    const onClose = () => {
      if (req.complete) return;
      stop();
      reject(new Error('the client closed the connection before its body was whole'));
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('close', onClose);
    req.on('error', reject);
  });
}

/** Keeps the answer's text and JSON for judging, decoded when the service compressed it (the client still gets the bytes as sent). */
function readBody(seen: Seen, bytes: Buffer): void {
  let plain = bytes;
  try {
    const encoding = seen.responseHeaders['content-encoding']?.trim().toLowerCase();
    if (encoding === 'gzip') plain = gunzipSync(bytes);
    else if (encoding === 'br') plain = brotliDecompressSync(bytes);
    else if (encoding === 'deflate') plain = inflateSync(bytes);
  } catch {
    return;
  }
  if (!/json/i.test(seen.responseHeaders['content-type'] ?? '')) return;
  seen.responseText = plain.toString('utf8');
  seen.responseJson = parseJson(seen.responseText);
}

function parseJson(text: string): unknown {
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
