// What a proxy check is: a judgement of one party, the client or the service, from the
// traffic the proxy saw, without a request of its own. The same parts as a service check
// (ID, what it asserts, clauses) and the same failures (fail, notApplicable), so the
// reports show them alike.
import type { ClauseId } from '../clauses.ts';
import { type Exchange, truncate } from '../http.ts';
import type { Shape } from '../implementation/shape.ts';
import type { Bucket } from '../pacer.ts';
import type { Seen, SeenDelivery, Traffic } from './traffic.ts';

export type Party = 'client' | 'service';

export interface ProxyContext {
  traffic: Traffic;
  shape: Shape;
  /** Verifies the service's webhook signatures when given. */
  signingSecret: string | undefined;
  /** The longest window, in seconds, that a RateLimit-Limit value can describe. */
  windowFor(bucket: Bucket, limit: number | undefined): number;
}

export interface ProxyCheck {
  /** `client.<behaviour>` or `service.<behaviour>`: stable, reports refer to it. */
  id: string;
  title: string;
  /** What holding means, as the proxy sees it. */
  asserts: string;
  party: Party;
  clauses: readonly ClauseId[];
  /** Fails with `fail`, or says why it could not judge with `notApplicable`. */
  run(ctx: ProxyContext): void;
}

export function defineProxyCheck(check: ProxyCheck): ProxyCheck {
  return check;
}

/** Timer and scheduling noise between a client's clock and the proxy's on one machine: a wait this much short still counts as kept. */
export const TIMING_MARGIN_MS = 50;

/** The exchanges of the service itself: neither answered by the proxy nor lost on the way. */
export function fromService(traffic: Traffic): Seen[] {
  return traffic.exchanges.filter((seen) => !seen.injected && seen.proxyError === undefined && seen.refusedByProxy === undefined && seen.status > 0);
}

/** An exchange as the reports show it: the key's label, never the key. */
export function describe(seen: Seen): string {
  const by = seen.injected ? '  (answered by the proxy: --inject-429)' : seen.refusedByProxy ? `  (refused by the proxy as the service refuses it: ${seen.refusedByProxy})` : '';
  const lines = [`#${seen.seq} ${seen.method} ${seen.path}  [${seen.key ?? 'no key'}]${by}`];
  if (seen.requestJson !== undefined) lines.push(`> ${truncate(JSON.stringify(seen.requestJson), 300)}`);
  else if (seen.requestBytes) lines.push(`> (a body of ${seen.requestBytes} bytes, not kept)`);
  lines.push(`< ${seen.status} after ${seen.answeredAt - seen.arrivedAt} ms`);
  for (const [name, value] of Object.entries(seen.responseHeaders)) {
    if (/^(content-type|location|retry-after|ratelimit-|x-ratelimit-)/.test(name)) lines.push(`< ${name}: ${value}`);
  }
  if (seen.responseText) lines.push(`< ${truncate(seen.responseText, 400)}`);
  else if (seen.responseBytes) lines.push(`< (a body of ${seen.responseBytes} bytes, not kept)`);
  return lines.join('\n');
}

export function describeDelivery(delivery: SeenDelivery): string {
  const headers = Object.entries(delivery.headers)
    .filter(([name]) => name.startsWith('x-service-'))
    .map(([name, value]) => `${name}: ${value}`);
  return [`webhook #${delivery.seq} for ${delivery.key ?? 'no key'}, passed to ${delivery.receiver} (receiver answered ${delivery.receiverStatus ?? 'nothing'})`, ...headers, truncate(delivery.rawBody.toString('utf8'), 400)].join('\n');
}

/** The record of a GET of one avatar or video, with its kind and ID, or undefined for any other exchange. */
export function recordRead(seen: Seen): { kind: 'avatar' | 'avatar_video'; id: string } | undefined {
  if (seen.method !== 'GET') return undefined;
  const kind = seen.operationId === 'getAvatar' ? 'avatar' : seen.operationId === 'getAvatarVideo' ? 'avatar_video' : undefined;
  if (!kind) return undefined;
  const id = decodeURIComponent(seen.path.split('?')[0]!.split('/').at(-1) ?? '');
  return id ? { kind, id } : undefined;
}

/** The record an event carries at data.object (the source's place for it). */
export function eventObject(delivery: SeenDelivery): Record<string, unknown> | undefined {
  const data = (delivery.json as { data?: unknown } | undefined)?.data;
  const object = typeof data === 'object' && data !== null ? (data as { object?: unknown }).object : undefined;
  return typeof object === 'object' && object !== null && !Array.isArray(object) ? (object as Record<string, unknown>) : undefined;
}

export function ms(value: number): string {
  return value >= 1000 ? `${(value / 1000).toFixed(2)} s` : `${Math.round(value)} ms`;
}

/**
 * An exchange as the runner's own observers read one (observe/rate-limit-headers.ts, the
 * profile's Shape), so that the proxy judges by the same rules as a run. The key is the
 * one key of the group being judged: the observers compare answers per key, and the
 * proxy hands them one key's answers at a time.
 */
export function asExchange(seen: Seen): Exchange {
  return {
    seq: seen.seq,
    key: 'main',
    method: seen.method,
    path: seen.path,
    requestHeaders: {},
    requestBody: undefined,
    status: seen.status,
    responseHeaders: seen.responseHeaders,
    bodyText: seen.responseText,
    json: seen.responseJson,
    startedAt: seen.arrivedAt,
    durationMs: seen.answeredAt - seen.arrivedAt,
    bucket: seen.bucket,
    retriedAfter429: 0,
    note: seen.key,
  };
}

/** Every record the service showed: GET answers of one avatar or video, and the records its webhooks carried, in the order they were seen. */
export function recordsShown(traffic: Traffic, shape: Shape): { kind: 'avatar' | 'avatar_video'; id: string; record: Record<string, unknown>; at: number; from: string; seen?: Seen; delivery?: SeenDelivery }[] {
  const out: ReturnType<typeof recordsShown> = [];
  for (const seen of fromService(traffic)) {
    const read = recordRead(seen);
    const record = seen.responseJson;
    if (!read || seen.status < 200 || seen.status >= 300 || typeof record !== 'object' || record === null || Array.isArray(record)) continue;
    out.push({ ...read, record: record as Record<string, unknown>, at: seen.answeredAt, from: `GET ${seen.path} (#${seen.seq})`, seen });
  }
  for (const delivery of traffic.deliveries) {
    const record = eventObject(delivery);
    const id = record?.id;
    if (!record || typeof id !== 'string') continue;
    const kind = traffic.created.find((job) => job.id === id)?.kind ?? kindOfEvent(shape.eventType(delivery));
    if (kind) out.push({ kind, id, record, at: delivery.arrivedAt, from: `webhook #${delivery.seq}`, delivery });
  }
  return out.sort((a, b) => a.at - b.at);
}

function kindOfEvent(type: unknown): 'avatar' | 'avatar_video' | undefined {
  return typeof type === 'string' ? (type.startsWith('avatar_video.') ? 'avatar_video' : type.startsWith('avatar.') ? 'avatar' : undefined) : undefined;
}
