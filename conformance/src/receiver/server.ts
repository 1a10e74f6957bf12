// The runner's built-in webhook receiver. Each job of a run gets its own URL, so every
// delivery is tied to the job it is about even when its body is broken. The receiver
// verifies what the source fixes for every implementation (the signature over
// `${timestamp}.${rawBody}`, a timestamp of the present), never an envelope of its own
// choosing, records each delivery for the checks and the report, and answers as the
// job's mode says: `ok` acknowledges, `fail-first` answers 500 to the first attempt (to
// observe a retry), `always-fail` answers 500 to every one (to observe that delivery
// failures change nothing). A duplicate of an attempt is answered like the attempt.
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { signWebhook, WEBHOOK_TOLERANCE_SECONDS } from '../../../contract/webhookSignature.ts';
import { within } from '../deadline.ts';
import { NO_STALLS, type Stalls } from '../stalls.ts';

export type ReceiverMode = 'ok' | 'fail-first' | 'always-fail';

export type Verification = { ok: true } | { ok: false; reason: 'missing-header' | 'bad-signature' | 'stale'; message: string };

/** A delivery that repeats an earlier one byte for byte within this long is its duplicate, not a retry. */
export const DUPLICATE_WINDOW_MS = 250;

export interface Delivery {
  seq: number;
  label: string;
  mode: ReceiverMode;
  /** Receipt time on the runner's clock, milliseconds. */
  receivedAt: number;
  method: string;
  /** Lower-case names. */
  headers: Record<string, string>;
  rawBody: string;
  json: unknown;
  verification: Verification;
  answered: number;
  /**
   * The same event, timestamp and signature as the delivery before it, moments apart:
   * the source lets senders deliver an event twice (receivers deduplicate), so it is a
   * copy of that attempt, not a new attempt.
   */
  duplicate: boolean;
}

export interface ReceiverOptions {
  host: string;
  port: number;
  /** What the service is told to call; defaults to http://<host>:<port>. */
  publicUrl?: string;
  secret: string;
  now: () => number;
  /**
   * Whether the sandbox clock of the jobs' account moved between two instants: a move
   * makes a due retry go at once, so a copy that follows one is a retry, not a duplicate.
   */
  clockMoved?: (from: number, to: number) => boolean;
  /**
   * The runner's own stalls (stalls.ts): a wait is lengthened by the stalls within it. Not
   * the duplicate window: a stall says nothing of when in it the sender sent, so a quick
   * retry would pass for a copy. None by default.
   */
  stalls?: Stalls;
}

const MAX_BODY_BYTES = 1024 * 1024;

/** The headers an attempt is stamped and signed with: an attempt sent again carries them unchanged. */
export const STAMPED_HEADERS = ['x-service-event-id', 'x-service-timestamp', 'x-service-signature'];

/** Whether two deliveries are the same bytes: body, event ID, timestamp and signature. */
export function sameBytes(a: Pick<Delivery, 'rawBody' | 'headers'>, b: Pick<Delivery, 'rawBody' | 'headers'>): boolean {
  return a.rawBody === b.rawBody && STAMPED_HEADERS.every((name) => a.headers[name] === b.headers[name]);
}

/** What a check sees of the receiver: the receiver itself, or its view under the check's deadline. */
export type Receiver = Pick<WebhookReceiver, 'publicBase' | 'urlFor' | 'deliveries' | 'attempts' | 'waitFor'>;

export class WebhookReceiver {
  readonly #server: Server;
  readonly #options: ReceiverOptions;
  readonly #token = randomBytes(6).toString('hex');
  readonly #modes = new Map<string, ReceiverMode>();
  readonly #deliveries: Delivery[] = [];
  readonly #listeners = new Set<() => void>();
  readonly #stalls: Stalls;
  #publicBase = '';

  private constructor(options: ReceiverOptions) {
    this.#options = options;
    this.#stalls = options.stalls ?? NO_STALLS;
    this.#server = createServer((req, res) => {
      void this.#handle(req).then(
        (status) => {
          res.writeHead(status, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ received: status < 300 }));
        },
        () => {
          res.writeHead(500);
          res.end();
        },
      );
    });
  }

  static async start(options: ReceiverOptions): Promise<WebhookReceiver> {
    const receiver = new WebhookReceiver(options);
    await new Promise<void>((resolve, reject) => {
      receiver.#server.once('error', reject);
      receiver.#server.listen(options.port, options.host, () => resolve());
    });
    const { port } = receiver.#server.address() as AddressInfo;
    const host = options.host.includes(':') ? `[${options.host}]` : options.host;
    receiver.#publicBase = (options.publicUrl ?? `http://${host}:${port}`).replace(/\/+$/, '');
    return receiver;
  }

  get publicBase(): string {
    return this.#publicBase;
  }

  /** A fresh URL for one job; its deliveries are recorded under `label`. */
  urlFor(label: string, mode: ReceiverMode): string {
    this.#modes.set(label, mode);
    return `${this.#publicBase}/hooks/${this.#token}/${encodeURIComponent(label)}`;
  }

  deliveries(label?: string): Delivery[] {
    return label === undefined ? [...this.#deliveries] : this.#deliveries.filter((d) => d.label === label);
  }

  /** The delivery attempts for `label`: its deliveries without the duplicates of an attempt. */
  attempts(label: string): Delivery[] {
    return this.deliveries(label).filter((d) => !d.duplicate);
  }

  /**
   * Resolves once `label` has `count` attempts, or at the timeout with what there is; a
   * `signal` that aborts first (a check's limit) ends it with LimitReached. The timeout is
   * of time the runner was awake to receive: its stalls within the wait lengthen it, to
   * twice the timeout at most.
   */
  async waitFor(label: string, count: number, timeoutMs: number, signal?: AbortSignal): Promise<Delivery[]> {
    const done = () => this.attempts(label).length >= count;
    if (done()) return this.attempts(label);
    const listeners = this.#listeners;
    const stalls = this.#stalls;
    const now = this.#options.now;
    const startedAt = now();
    let finish = () => undefined as void;
    const arrived = new Promise<void>((resolve) => {
      let timer = setTimeout(due, timeoutMs);
      /** How much longer than `timeoutMs` the wait was made for stalls so far. */
      let lengthened = 0;
      const listener = () => {
        if (done()) end();
      };
      function due() {
        // A stall delays both the timer and the deliveries that arrived during it; a timer
        // runs before pending sockets are read, so the wait goes on for what was stalled,
        // up to its stated time again: a runner stalled most of the time still ends it.
        const stalled = Math.min(timeoutMs, stalls.within(startedAt, now()));
        if (stalled <= lengthened) return end();
        timer = setTimeout(due, stalled - lengthened);
        lengthened = stalled;
      }
      function end() {
        clearTimeout(timer);
        listeners.delete(listener);
        resolve();
      }
      finish = end;
      listeners.add(listener);
    });
    try {
      await within(arrived, signal, `waiting for webhook attempt ${count} of ${label}`);
    } finally {
      // Ended by the deadline or not, no timer or listener of this wait is left behind.
      finish();
    }
    return this.attempts(label);
  }

  /** This receiver as a check sees it: every wait ends when the check's `signal` does. */
  within(signal: AbortSignal): Receiver {
    return {
      publicBase: this.publicBase,
      urlFor: (label, mode) => this.urlFor(label, mode),
      deliveries: (label) => this.deliveries(label),
      attempts: (label) => this.attempts(label),
      waitFor: (label, count, timeoutMs) => this.waitFor(label, count, timeoutMs, signal),
    };
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections?.();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  async #handle(req: IncomingMessage): Promise<number> {
    const receivedAt = this.#options.now();
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of req) {
      size += (chunk as Buffer).length;
      if (size > MAX_BODY_BYTES) return 413;
      chunks.push(chunk as Buffer);
    }
    const raw = Buffer.concat(chunks);
    const match = /^\/hooks\/([0-9a-f]+)\/([^/?]+)/.exec(req.url ?? '');
    if (!match || match[1] !== this.#token) return 404;
    const label = decodeURIComponent(match[2] ?? '');
    const mode = this.#modes.get(label) ?? 'ok';

    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(req.headers)) {
      if (value !== undefined) headers[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
    }
    const verification = this.#verify(raw, headers, receivedAt);
    let json: unknown;
    try {
      json = JSON.parse(raw.toString('utf8'));
    } catch {
      json = undefined;
    }
    const rawBody = raw.toString('utf8');
    const previous = this.deliveries(label).at(-1);
    const duplicate =
      previous !== undefined &&
      receivedAt - previous.receivedAt <= DUPLICATE_WINDOW_MS &&
      !(this.#options.clockMoved?.(previous.receivedAt, receivedAt) ?? false) &&
      sameBytes(previous, { rawBody, headers });
    const attemptsBefore = this.attempts(label).length;
    const failing = mode === 'always-fail' || (mode === 'fail-first' && (duplicate ? attemptsBefore === 1 : attemptsBefore === 0));
    const answered = !verification.ok ? 400 : failing ? 500 : 200;
    this.#deliveries.push({
      seq: this.#deliveries.length + 1,
      label,
      mode,
      receivedAt,
      method: req.method ?? '',
      headers,
      rawBody,
      json,
      verification,
      answered,
      duplicate,
    });
    this.#listeners.forEach((listener) => listener());
    return answered;
  }

  /** The source's scheme (section 6.4): v1= hex HMAC-SHA256 of `${timestamp}.${rawBody}`, with a present timestamp. */
  #verify(raw: Buffer, headers: Record<string, string>, receivedAt: number): Verification {
    const timestamp = headers['x-service-timestamp']?.trim();
    const signature = headers['x-service-signature']?.trim();
    if (!timestamp || !signature) return { ok: false, reason: 'missing-header', message: 'X-Service-Timestamp or X-Service-Signature is missing' };
    const seconds = Number(timestamp);
    if (!/^\d+$/.test(timestamp) || !Number.isSafeInteger(seconds)) return { ok: false, reason: 'stale', message: `X-Service-Timestamp ${timestamp} is not Unix seconds` };
    const expected = Buffer.from(signWebhook(this.#options.secret, seconds, raw));
    const given = Buffer.from(signature);
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) return { ok: false, reason: 'bad-signature', message: 'the signature does not verify with the signing secret' };
    if (Math.abs(seconds - receivedAt / 1000) > WEBHOOK_TOLERANCE_SECONDS) return { ok: false, reason: 'stale', message: `the timestamp is more than ${WEBHOOK_TOLERANCE_SECONDS} s from the receiver's clock` };
    return { ok: true };
  }
}
