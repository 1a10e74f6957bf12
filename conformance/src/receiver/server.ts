// The runner's built-in webhook receiver (issue 5 item 9). Each job of a run gets its
// own URL, so every delivery is tied to the job it is about even when its body is
// broken. The receiver verifies each delivery with the client's verifier, records it
// for the checks and the report, and answers as the job's mode says: `ok` acknowledges,
// `fail-first` answers 500 to the first delivery (to observe a retry), `always-fail`
// answers 500 to every one (to observe that delivery failures change nothing).
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebhookVerificationError, verifyWebhook, type WebhookEvent } from '../../../client/src/verify.ts';

export type ReceiverMode = 'ok' | 'fail-first' | 'always-fail';

export type Verification =
  | { ok: true; event: WebhookEvent }
  | { ok: false; reason: string; message: string };

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
}

export interface ReceiverOptions {
  host: string;
  port: number;
  /** What the service is told to call; defaults to http://<host>:<port>. */
  publicUrl?: string;
  secret: string;
  now: () => number;
}

const MAX_BODY_BYTES = 1024 * 1024;

export class WebhookReceiver {
  readonly #server: Server;
  readonly #options: ReceiverOptions;
  readonly #token = randomBytes(6).toString('hex');
  readonly #modes = new Map<string, ReceiverMode>();
  readonly #deliveries: Delivery[] = [];
  readonly #listeners = new Set<() => void>();
  #publicBase = '';

  private constructor(options: ReceiverOptions) {
    this.#options = options;
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

  /** Resolves once `label` has `count` deliveries, or at the timeout with what there is. */
  async waitFor(label: string, count: number, timeoutMs: number): Promise<Delivery[]> {
    const done = () => this.deliveries(label).length >= count;
    if (done()) return this.deliveries(label);
    await new Promise<void>((resolve) => {
      const timer = setTimeout(finish, timeoutMs);
      const listener = () => {
        if (done()) finish();
      };
      function finish() {
        clearTimeout(timer);
        receiverListeners.delete(listener);
        resolve();
      }
      const receiverListeners = this.#listeners;
      receiverListeners.add(listener);
    });
    return this.deliveries(label);
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
    let verification: Verification;
    try {
      verification = { ok: true, event: verifyWebhook({ rawBody: raw, headers, secret: this.#options.secret, now: Math.floor(receivedAt / 1000) }) };
    } catch (error) {
      verification =
        error instanceof WebhookVerificationError
          ? { ok: false, reason: error.reason, message: error.message }
          : { ok: false, reason: 'error', message: String(error) };
    }
    let json: unknown;
    try {
      json = JSON.parse(raw.toString('utf8'));
    } catch {
      json = undefined;
    }
    const earlier = this.deliveries(label).length;
    const answered = !verification.ok ? 400 : mode === 'always-fail' || (mode === 'fail-first' && earlier === 0) ? 500 : 200;
    this.#deliveries.push({
      seq: this.#deliveries.length + 1,
      label,
      mode,
      receivedAt,
      method: req.method ?? '',
      headers,
      rawBody: raw.toString('utf8'),
      json,
      verification,
      answered,
    });
    this.#listeners.forEach((listener) => listener());
    return answered;
  }
}
