// The runner as the sender: it signs and POSTs deliveries to the one URL it was given,
// and nowhere else (no redirect is followed, no other host is ever contacted). Every
// request has its own time limit and its own connection, closed when it ends; close()
// ends whatever is still open, so a run ends when its last check does.
import { request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { signWebhook, WEBHOOK_SIGNATURE_PREFIX } from '../../../contract/webhookSignature.ts';
import type { ImplementationProfile } from '../implementation/profile.ts';
import { type Event, usualForm } from './events.ts';

/** What the runner reads of an answer: enough to show it, never the whole of a large one. */
const MAX_ANSWER_BYTES = 64 * 1024;

export interface Delivery {
  /** What this delivery is, for messages: "the same delivery again", ... */
  label: string;
  body: Buffer;
  /** The headers as sent, in order. */
  headers: [name: string, value: string][];
}

export type Answer =
  | { kind: 'answered'; status: number; ms: number; body: string }
  | { kind: 'no-answer'; reason: string; ms: number; refused: boolean };

export interface SignOptions {
  /** Unix seconds; default now. */
  timestamp?: number;
  /** Default the run's signing secret. */
  secret?: string;
  /** The exact bytes to send; default the event in the sender's usual form. */
  body?: Buffer;
  /** Sign these bytes instead of the body sent (a body changed after signing). */
  signedBody?: Buffer;
  /** Replace the signature header's value, or leave it out (null). */
  signature?: string | null;
  label: string;
}

export interface Exchange {
  delivery: Delivery;
  answer: Answer;
}

export class Sender {
  readonly url: URL;
  readonly #secret: string;
  readonly #profile: ImplementationProfile;
  readonly #timeoutMs: number;
  readonly #now: () => number;
  readonly #open = new Set<ClientRequest>();
  readonly exchanges: Exchange[] = [];
  /** Set once the receiver has answered anything: a refused connection after that is its failure, not an unreachable URL. */
  everAnswered = false;

  constructor(options: { url: URL; secret: string; profile: ImplementationProfile; timeoutMs: number; now: () => number }) {
    this.url = options.url;
    this.#secret = options.secret;
    this.#profile = options.profile;
    this.#timeoutMs = options.timeoutMs;
    this.#now = options.now;
  }

  get timeoutMs(): number {
    return this.#timeoutMs;
  }

  nowSeconds(): number {
    return Math.floor(this.#now() / 1000);
  }

  /** The signature header's value over `${timestamp}.${body}`, with the implementation's prefix. */
  signature(timestamp: number, body: Buffer, secret = this.#secret): string {
    const prefix = this.#profile.webhookFormat.signaturePrefix;
    return prefix + signWebhook(secret, timestamp, body).slice(WEBHOOK_SIGNATURE_PREFIX.length);
  }

  /** A delivery of the event as the implementation sends it, with whatever the case changes. */
  delivery(event: Event, options: SignOptions): Delivery {
    const names = this.#profile.webhookFormat.headers;
    const timestamp = options.timestamp ?? this.nowSeconds();
    const body = options.body ?? usualForm(event.body);
    const signature = options.signature === undefined ? this.signature(timestamp, options.signedBody ?? body, options.secret) : options.signature;
    const headers: [string, string][] = [
      ['Content-Type', 'application/json'],
      ['User-Agent', 'avatar-api-conformance (receiver mode)'],
      [names.eventId, event.id],
      [names.timestamp, String(timestamp)],
      ...(signature === null ? [] : [[names.signature, signature] as [string, string]]),
      ...Object.entries(event.headers),
    ];
    return { label: options.label, body, headers };
  }

  /** POSTs one delivery and waits for the answer, at most the run's time per request. */
  send(delivery: Delivery): Promise<Answer> {
    const started = this.#now();
    const request = this.url.protocol === 'https:' ? httpsRequest : httpRequest;
    return new Promise<Answer>((resolve) => {
      let settled = false;
      const finish = (answer: Answer) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        this.#open.delete(req);
        req.destroy();
        this.exchanges.push({ delivery, answer });
        resolve(answer);
      };
      // agent: false gives each delivery a connection of its own, closed with it: nothing
      // is left open between requests, and a request that runs out of time takes its
      // connection with it.
      // Headers as a list keep their order and spelling; Node then adds none of its own but Connection.
      const headers = ['Host', this.url.host, ...delivery.headers.flat(), 'Content-Length', String(delivery.body.length)];
      const req = request(this.url, { method: 'POST', agent: false, headers }, (res: IncomingMessage) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          if (size < MAX_ANSWER_BYTES) chunks.push(chunk);
          size += chunk.length;
        });
        const done = () => {
          this.everAnswered = true;
          finish({ kind: 'answered', status: res.statusCode ?? 0, ms: this.#now() - started, body: Buffer.concat(chunks).toString('utf8').slice(0, MAX_ANSWER_BYTES) });
        };
        res.on('end', done);
        // An answer whose body breaks off still said its status.
        res.on('error', done);
        res.on('aborted', done);
      });
      this.#open.add(req);
      const timer = setTimeout(() => finish({ kind: 'no-answer', reason: `no answer within ${formatSeconds(this.#timeoutMs)}`, ms: this.#now() - started, refused: false }), this.#timeoutMs);
      req.on('error', (error: NodeJS.ErrnoException) => {
        finish({ kind: 'no-answer', reason: error.code ? `${error.code}: ${error.message}` : error.message, ms: this.#now() - started, refused: error.code === 'ECONNREFUSED' || error.code === 'ENOTFOUND' || error.code === 'EHOSTUNREACH' });
      });
      req.end(delivery.body);
    });
  }

  /** Ends every request still open (a check that ran out of time leaves them). */
  close(): void {
    for (const req of this.#open) req.destroy();
    this.#open.clear();
  }
}

export function formatSeconds(ms: number): string {
  return `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;
}

/** A delivery and its answer as a failure shows them; the body cut short. */
export function describeExchange(delivery: Delivery, answer: Answer | undefined): string {
  const body = delivery.body.toString('utf8');
  const lines = [`> POST (${delivery.label})`, ...delivery.headers.filter(([name]) => !/^(content-type|user-agent)$/i.test(name)).map(([name, value]) => `> ${name}: ${value}`), `> ${body.length > 240 ? `${body.slice(0, 240)}…` : body}`];
  if (answer?.kind === 'answered') lines.push(`< ${answer.status} after ${formatSeconds(answer.ms)}${answer.body ? `: ${answer.body.length > 200 ? `${answer.body.slice(0, 200)}…` : answer.body}` : ''}`);
  else if (answer) lines.push(`< ${answer.reason}`);
  return lines.join('\n');
}
