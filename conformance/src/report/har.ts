// The traffic of a run as an HTTP Archive (HAR 1.2, http://www.softwareishard.com/blog/har-12-spec/),
// for --report-har: what a browser's network panel and the common HAR viewers open.
// Every exchange is one entry, and each webhook the receiver (or the proxy) got is one
// entry of its own, the service's POST and the receiver's answer. The spec lets a
// writer add fields whose names begin with an underscore: `_check` names the check
// that made the entry ("run" for the run's own requests: preflight, shared jobs,
// balances), `_webhook` marks a delivery. Every string written goes through the one
// redaction (contract/secrets.ts): the secrets the run was given, and anything shaped
// like a key or a signing secret, wherever it shows (a header, a URL, a body echoed).
import { writeFileSync } from 'node:fs';
import { redact, redactSecretShapes } from '../../../contract/secrets.ts';
import type { Exchange } from '../http.ts';
import type { Seen, SeenDelivery, Traffic } from '../proxy/traffic.ts';
import type { Delivery } from '../receiver/server.ts';
import { TOOL, VERSION } from './build.ts';

export interface HarHeader {
  name: string;
  value: string;
}

export interface HarEntry {
  startedDateTime: string;
  time: number;
  request: {
    method: string;
    url: string;
    httpVersion: string;
    cookies: never[];
    headers: HarHeader[];
    queryString: HarHeader[];
    postData?: { mimeType: string; text: string };
    headersSize: -1;
    bodySize: number;
  };
  response: {
    status: number;
    statusText: string;
    httpVersion: string;
    cookies: never[];
    headers: HarHeader[];
    content: { size: number; mimeType: string; text?: string };
    redirectURL: string;
    headersSize: -1;
    bodySize: number;
  };
  cache: Record<string, never>;
  timings: { send: number; wait: number; receive: number };
  _check: string;
  _webhook?: true;
  _note?: string;
}

export interface Har {
  log: { version: '1.2'; creator: { name: string; version: string }; entries: HarEntry[]; comment?: string };
}

/** What a service run leaves for its HAR file: run.ts fills it as the run goes. */
export interface RunTraffic {
  baseUrl: string;
  exchanges: readonly Exchange[];
  /** What the run's receiver got; empty without one. */
  deliveries: readonly Delivery[];
  /** The receiver's address as the service was told it, for the deliveries' URLs. */
  receiverBase?: string;
  secrets: readonly string[];
}

/** The label of the run's own requests, which no check made. */
export const RUN_LABEL = 'run';

/** What one entry is made of, whichever record it comes from. */
interface Sent {
  check: string;
  webhook?: boolean;
  note?: string | undefined;
  at: number;
  ms: number;
  method: string;
  url: string;
  requestHeaders: Record<string, string> | [string, string][];
  requestBody: string | undefined;
  status: number;
  responseHeaders: Record<string, string> | [string, string][];
  responseBody: string;
}

/** A service run's exchanges and the webhooks its receiver got, in the order they happened. */
export function runHar(traffic: RunTraffic): Har {
  const sent: Sent[] = traffic.exchanges.map((exchange) => ({
    check: exchange.check ?? RUN_LABEL,
    note: exchange.note,
    at: exchange.startedAt,
    ms: exchange.durationMs,
    method: exchange.method,
    url: traffic.baseUrl.replace(/\/+$/, '') + exchange.path,
    requestHeaders: exchange.requestHeaders,
    requestBody: exchange.requestBody,
    status: exchange.status,
    responseHeaders: exchange.responseHeaders,
    responseBody: exchange.bodyText,
  }));
  for (const delivery of traffic.deliveries) {
    sent.push({
      // A delivery's label is the job it belongs to, which the check that made the job named.
      check: delivery.label,
      webhook: true,
      note: delivery.verification.ok ? 'signature verified' : `signature not verified: ${delivery.verification.message}`,
      at: delivery.receivedAt,
      ms: 0,
      method: delivery.method,
      // The receiver's path holds an unguessable token of the run: not written down.
      url: `${traffic.receiverBase ?? 'http://receiver'}/hooks/(token)/${encodeURIComponent(delivery.label)}`,
      requestHeaders: delivery.headers,
      requestBody: delivery.rawBody,
      status: delivery.answered,
      responseHeaders: {},
      responseBody: '',
    });
  }
  return har(sent, traffic.secrets);
}

/** What the proxy saw: the clients' exchanges with the service, and the webhooks it passed on. */
export function proxyHar(traffic: Traffic, upstream: string, secrets: readonly string[] = []): Har {
  const sent: Sent[] = traffic.exchanges.map((seen: Seen) => ({
    check: seen.key ?? 'no key',
    note: seen.injected ? 'answered 429 by the proxy (--inject-429)' : (seen.proxyError ?? (seen.refusedByProxy ? `refused by the proxy: ${seen.refusedByProxy}` : undefined)),
    at: seen.arrivedAt,
    ms: Math.max(0, seen.answeredAt - seen.arrivedAt),
    method: seen.method,
    url: upstream.replace(/\/+$/, '') + seen.path,
    // The proxy keeps no request headers (a key never leaves its forwarding code): `_check` names the key by its label.
    requestHeaders: seen.requestJson === undefined ? {} : ({ 'content-type': 'application/json' } as Record<string, string>),
    requestBody: seen.requestJson === undefined ? undefined : JSON.stringify(seen.requestJson),
    status: seen.status,
    responseHeaders: seen.responseHeaders,
    responseBody: seen.responseText,
  }));
  for (const delivery of traffic.deliveries as SeenDelivery[]) {
    sent.push({
      check: delivery.key ?? 'no key',
      webhook: true,
      note: `passed on to the client's receiver, create exchange ${delivery.createSeq}`,
      at: delivery.arrivedAt,
      ms: 0,
      method: 'POST',
      url: delivery.receiver,
      requestHeaders: delivery.headers,
      requestBody: delivery.rawBody.toString('utf8'),
      status: delivery.receiverStatus ?? 0,
      responseHeaders: {},
      responseBody: '',
    });
  }
  // Every token the proxy saw, and their labels' use in place of them, keeps keys out.
  return har(sent, [...secrets, ...traffic.tokens]);
}

/** A receiver run's deliveries: the runner as the sender, the receiver's answers. */
export function senderHar(url: string, exchanges: readonly { delivery: { label: string; body: Buffer; headers: [string, string][] }; answer: { kind: 'answered'; status: number; ms: number; body: string } | { kind: 'no-answer'; reason: string; ms: number } ; check?: string; at?: number }[], secrets: readonly string[], startedAt: number): Har {
  const sent: Sent[] = exchanges.map((exchange) => ({
    check: exchange.check ?? exchange.delivery.label,
    webhook: true,
    note: exchange.answer.kind === 'no-answer' ? exchange.answer.reason : exchange.delivery.label,
    at: exchange.at ?? startedAt,
    ms: exchange.answer.ms,
    method: 'POST',
    url,
    requestHeaders: exchange.delivery.headers,
    requestBody: exchange.delivery.body.toString('utf8'),
    status: exchange.answer.kind === 'answered' ? exchange.answer.status : 0,
    responseHeaders: {},
    responseBody: exchange.answer.kind === 'answered' ? exchange.answer.body : '',
  }));
  return har(sent, secrets);
}

function har(sent: Sent[], secrets: readonly string[]): Har {
  const mask = (text: string) => redactSecretShapes(redact(text, secrets));
  const entries = sent
    .slice()
    .sort((a, b) => a.at - b.at)
    .map((one): HarEntry => {
      const requestHeaders = headerList(one.requestHeaders, mask);
      const responseHeaders = headerList(one.responseHeaders, mask);
      const url = mask(one.url);
      const requestBody = one.requestBody === undefined ? undefined : mask(one.requestBody);
      const responseBody = mask(one.responseBody);
      const ms = Math.max(0, Math.round(one.ms));
      const requestType = headerValue(requestHeaders, 'content-type') ?? 'application/json';
      return {
        startedDateTime: new Date(one.at).toISOString(),
        time: ms,
        request: {
          method: one.method,
          url,
          httpVersion: 'HTTP/1.1',
          cookies: [],
          headers: requestHeaders,
          queryString: queryOf(url),
          ...(requestBody === undefined ? {} : { postData: { mimeType: requestType, text: requestBody } }),
          headersSize: -1,
          bodySize: requestBody === undefined ? 0 : Buffer.byteLength(requestBody),
        },
        response: {
          status: one.status,
          // No reason phrase is kept; an unanswered request (status 0) says so, as browsers do.
          statusText: one.status === 0 ? 'no answer' : '',
          httpVersion: 'HTTP/1.1',
          cookies: [],
          headers: responseHeaders,
          content: { size: Buffer.byteLength(responseBody), mimeType: headerValue(responseHeaders, 'content-type') ?? (responseBody ? 'text/plain' : 'x-unknown'), ...(responseBody ? { text: responseBody } : {}) },
          redirectURL: headerValue(responseHeaders, 'location') ?? '',
          headersSize: -1,
          bodySize: Buffer.byteLength(responseBody),
        },
        cache: {},
        timings: { send: 0, wait: ms, receive: 0 },
        _check: one.check,
        ...(one.webhook ? { _webhook: true as const } : {}),
        ...(one.note ? { _note: mask(one.note) } : {}),
      };
    });
  return { log: { version: '1.2', creator: { name: TOOL, version: VERSION }, entries } };
}

function headerList(headers: Record<string, string> | [string, string][], mask: (text: string) => string): HarHeader[] {
  const pairs = Array.isArray(headers) ? headers : Object.entries(headers);
  return pairs.map(([name, value]) => ({ name, value: mask(value) }));
}

function headerValue(headers: HarHeader[], name: string): string | undefined {
  return headers.find((header) => header.name.toLowerCase() === name)?.value;
}

function queryOf(url: string): HarHeader[] {
  try {
    return [...new URL(url).searchParams].map(([name, value]) => ({ name, value }));
  } catch {
    return [];
  }
}

export function toHar(har: Har): string {
  return `${JSON.stringify(har, null, 2)}\n`;
}

/** Writes a HAR file; one that cannot be written is said, and the run's verdict stands (as for the other reports). */
export function writeHar(file: string | undefined, make: () => Har, err: (text: string) => void): void {
  if (!file) return;
  try {
    writeFileSync(file, toHar(make()));
  } catch (error) {
    err(`cannot write ${file}: ${error instanceof Error ? error.message : String(error)}\n`);
  }
}
