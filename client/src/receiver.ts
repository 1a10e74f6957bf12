// An idempotent webhook receiver as Koa middleware (WH-DUPLICATES, WH-ORDER).
// It reads the raw body, verifies it (verify.ts), hands each event to the
// application once, and answers 2xx to every later copy of the same event.
//
//   import { webhookReceiver } from '@avatar-service/client/receiver';
//   const app = new Koa();
//   app.use(webhookReceiver({ secret: process.env.SIGNING_SECRET!, onEvent: handle }));
//
// Its own entry of the package, apart from the client's: its types name Koa's, which only
// those who use it install (@types/koa).
//
// Mount it before any body parser: the signature covers the exact bytes sent, and a
// parsed-then-reserialised body no longer matches.
import type { Context, Middleware } from 'koa';
import { type WebhookEvent, type WebhookScheme, WebhookVerificationError, verifyWebhook } from './verify.ts';

/**
 * Where processed event IDs are kept. Event IDs are derived from the resource ID and
 * the event type (ND-ENVELOPE), so one ID stands for "this job reached this state",
 * whatever order events of different jobs arrive in (WH-ORDER).
 * Use a shared, durable store (a database table with a unique key) when more than one
 * receiver process runs.
 */
export interface ProcessedEventStore {
  has(eventId: string): boolean | Promise<boolean>;
  add(eventId: string): void | Promise<void>;
}

/** Keeps the most recent `capacity` event IDs in memory; the default store. */
export class MemoryEventStore implements ProcessedEventStore {
  readonly #ids = new Set<string>();
  readonly #capacity: number;
  constructor(capacity = 100_000) {
    this.#capacity = capacity;
  }
  has(eventId: string): boolean {
    return this.#ids.has(eventId);
  }
  add(eventId: string): void {
    this.#ids.add(eventId);
    // Sets iterate in insertion order, so the first entry is the oldest.
    while (this.#ids.size > this.#capacity) {
      const oldest = this.#ids.values().next().value;
      if (oldest === undefined) break;
      this.#ids.delete(oldest);
    }
  }
}

export interface WebhookReceiverOptions {
  /** The integration's signing secret. */
  secret: string;
  /** Called once per event; throw to answer 500 so that the sender retries. */
  onEvent: (event: WebhookEvent, ctx: Context) => void | Promise<void>;
  store?: ProcessedEventStore;
  toleranceSeconds?: number;
  /** The receiver's clock as Unix seconds (tests pass a fixed one). */
  now?: () => number;
  /** Bodies above this size are refused with 413. Events are far smaller. */
  maxBodyBytes?: number;
  /** Which signature headers to verify (verifyWebhook's `scheme`); default either. */
  scheme?: WebhookScheme;
  /** Called with every refused delivery, for logging. */
  onRejected?: (error: WebhookVerificationError, ctx: Context) => void;
}

const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

export function webhookReceiver(options: WebhookReceiverOptions): Middleware {
  const store = options.store ?? new MemoryEventStore();
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  // A duplicate that arrives while the first copy is still being handled waits for it,
  // so the application never sees one event twice at the same time.
  const inFlight = new Map<string, Promise<void>>();

  return async function receiveWebhook(ctx) {
    if (ctx.method !== 'POST') {
      ctx.set('Allow', 'POST');
      ctx.status = 405;
      ctx.body = { error: 'method_not_allowed' };
      return;
    }

    const rawBody = await readRawBody(ctx, maxBodyBytes);
    if (rawBody === undefined) {
      ctx.status = 413;
      ctx.body = { error: 'payload_too_large' };
      return;
    }

    let event: WebhookEvent;
    try {
      event = verifyWebhook({
        rawBody,
        headers: ctx.req.headers,
        secret: options.secret,
        ...(options.toleranceSeconds === undefined ? {} : { toleranceSeconds: options.toleranceSeconds }),
        ...(options.now === undefined ? {} : { now: options.now() }),
        ...(options.scheme === undefined ? {} : { scheme: options.scheme }),
      });
    } catch (error) {
      if (!(error instanceof WebhookVerificationError)) throw error;
      options.onRejected?.(error, ctx);
      ctx.status = 400;
      ctx.body = { error: error.reason, header: error.header ?? null, message: error.message };
      return;
    }

    for (let pending = inFlight.get(event.id); pending; pending = inFlight.get(event.id)) {
      await pending.catch(() => undefined);
    }
    if (await store.has(event.id)) {
      ctx.status = 200;
      ctx.body = { received: true, duplicate: true };
      return;
    }

    const handling = (async () => {
      await options.onEvent(event, ctx);
      await store.add(event.id);
    })();
    inFlight.set(event.id, handling);
    try {
      await handling;
    } catch {
      // Not stored: the sender's retry gets another chance (WH-RETRY).
      ctx.status = 500;
      ctx.body = { error: 'handler_failed' };
      return;
    } finally {
      inFlight.delete(event.id);
    }
    ctx.status = 200;
    ctx.body = { received: true, duplicate: false };
  };
}

/** The exact request bytes, or undefined when they exceed the limit. */
async function readRawBody(ctx: Context, maxBytes: number): Promise<Buffer | undefined> {
  // A body parser that ran earlier may have kept the raw text (koa-bodyparser does).
  const kept = (ctx.request as { rawBody?: unknown }).rawBody;
  if (typeof kept === 'string') return Buffer.from(kept, 'utf8');
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req) {
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
    size += buffer.length;
    if (size > maxBytes) return undefined;
    chunks.push(buffer);
  }
  return Buffer.concat(chunks);
}
