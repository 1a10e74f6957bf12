// Every request the runner makes goes through here: it is paced (pacer.ts), recorded as
// an Exchange for the checks and the reports, and its secrets are redacted. The key is
// presented as the implementation profile says; the bucket of each request is the one
// the contract states for its operation (x-rate-limit-bucket). A client made `within` a
// deadline's signal ends every wait and request with LimitReached when it aborts.
import { AsyncLocalStorage } from 'node:async_hooks';
import { retryAfterSeconds } from '../../client/src/index.ts';
import { redact } from '../../contract/secrets.ts';
import { failedConnection, watchConnections } from './connections.ts';
import { reached, sleepWithin } from './deadline.ts';
import { type Bucket, Pacer, type WindowFor } from './pacer.ts';

/**
 * The keys a run may be given: main, a second account's, one without credits, and a
 * workspace's with its owner account's (credits.workspace-charged alone uses those two).
 */
export type KeyName = 'main' | 'second' | 'empty' | 'workspace' | 'owner';
const KEY_NAMES: ReadonlySet<string> = new Set<KeyName>(['main', 'second', 'empty', 'workspace', 'owner']);
/** A configured key (not none or a made-up one): its windows are paced and learnt. */
const isKeyName = (key: unknown): key is KeyName => typeof key === 'string' && KEY_NAMES.has(key);
export type { Bucket };

export interface Exchange {
  seq: number;
  /** The credential sent: one of the configured keys, none, or a made-up one. */
  key: KeyName | 'none' | 'made-up';
  method: string;
  path: string;
  /** Lower-case names; the credential is redacted. */
  requestHeaders: Record<string, string>;
  requestBody: string | undefined;
  status: number;
  /** Lower-case names. */
  responseHeaders: Record<string, string>;
  bodyText: string;
  json: unknown;
  startedAt: number;
  durationMs: number;
  bucket: Bucket | undefined;
  /** 429s the pacer waited out before this answer, if any. */
  retriedAfter429: number;
  note: string | undefined;
  /** The check whose client sent it; absent for the run's own requests (preflight, shared jobs, balances). */
  check?: string;
}

export interface SendRequest {
  /** A configured key, null for no credential at all, or a made-up token. */
  key: KeyName | null | { token: string };
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'OPTIONS' | 'HEAD';
  path: string;
  /** Sent as application/json. */
  json?: unknown;
  /** Sent as it is (use `headers` for its content type). */
  body?: string;
  headers?: Record<string, string>;
  /** 'wait': wait out a 429 and resend (default). 'return': hand the 429 to the caller. */
  on429?: 'wait' | 'return';
  /** false: send even when the key's window looks used up (to observe a 429). Default true. */
  pace?: boolean;
  note?: string;
  /**
   * true: the caller knows the request is safe to send twice (sent with the key without
   * credits, where a conforming service creates nothing), so a reset on a reused
   * connection before any byte of the answer sends it again, as for a GET.
   */
  resend?: boolean;
}

/**
 * The check whose run a request is part of, carried through its async calls: a check
 * reaches the service through its own client and through the run's shared world (jobs
 * made once for several checks), and either way the exchange names the check that was
 * running when it was sent. run.ts enters it around each check.
 */
export const checkScope = new AsyncLocalStorage<string>();

function checkOf(): { check?: string } {
  const check = checkScope.getStore();
  return check === undefined ? {} : { check };
}

export class UnreachableError extends Error {
  override name = 'UnreachableError';
}

export interface HttpOptions {
  baseUrl: string;
  keys: Partial<Record<KeyName, string>>;
  requestTimeoutMs: number;
  /** The most seconds one request may spend waiting out 429s in real time (a key with a sandbox clock has its time moved instead). */
  maxRateLimitWaitSeconds: number;
  now: () => number;
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  onWait?: (message: string) => void;
  fetch?: typeof globalThis.fetch;
  /** false: never hold requests back (a stateless mock has no real limits to plan for). */
  pacing?: boolean;
  /** The header and value that present a key; default `Authorization: Bearer <key>`. */
  credential?: (token: string) => [name: string, value: string];
  /** The bucket a request counts against (RL-BUCKETS), or none for paths outside the API. */
  bucketOf: (method: string, path: string) => Bucket | undefined;
  /** The longest window a limit can describe: waits beyond it are never taken. */
  windowFor?: WindowFor;
  /** The generation windows a GET /v1/me body shows, where it shows them. */
  windowsOf?: (json: unknown) => { limit: number; remaining: number; reset: number }[];
}

export class Http {
  readonly log: Exchange[];
  readonly pacer: Pacer;
  readonly #options: HttpOptions;
  readonly #credential: (token: string) => [name: string, value: string];
  readonly #signal: AbortSignal | undefined;

  constructor(options: HttpOptions, shared?: { log: Exchange[]; pacer: Pacer; signal: AbortSignal }) {
    watchConnections();
    this.#options = options;
    this.log = shared?.log ?? [];
    this.pacer = shared?.pacer ?? new Pacer(options.now, options.sleep, options.windowFor);
    this.#signal = shared?.signal;
    this.#credential = options.credential ?? ((token) => ['authorization', `Bearer ${token}`]);
  }

  /**
   * The same client (its log, its gates) under a deadline: from the moment `signal`
   * aborts, every wait and request of it ends with LimitReached and none is sent.
   */
  within(signal: AbortSignal): Http {
    return new Http(this.#options, { log: this.log, pacer: this.pacer, signal: this.#signal ? AbortSignal.any([this.#signal, signal]) : signal });
  }

  get baseUrl(): string {
    return this.#options.baseUrl;
  }

  /** Every configured key, for redaction. */
  get secrets(): string[] {
    return Object.values(this.#options.keys).filter((key): key is string => Boolean(key));
  }

  /** The token of a configured key (checks never print it). */
  token(key: KeyName): string | undefined {
    return this.#options.keys[key];
  }

  async send(request: SendRequest): Promise<Exchange> {
    const headers: Record<string, string> = { accept: 'application/json, application/problem+json', ...lower(request.headers ?? {}) };
    let body = request.body;
    if (request.json !== undefined) {
      body = JSON.stringify(request.json);
      headers['content-type'] ??= 'application/json';
    }
    let key: Exchange['key'] = 'none';
    let token: string | undefined;
    if (typeof request.key === 'string') {
      token = this.#options.keys[request.key];
      if (!token) throw new Error(`no ${request.key} key was configured`);
      key = request.key;
    } else if (request.key !== null) {
      token = request.key.token;
      key = 'made-up';
    }
    let credentialHeader: string | undefined;
    if (token !== undefined) {
      const [name, value] = this.#credential(token);
      credentialHeader = name.toLowerCase();
      headers[credentialHeader] = value;
    }
    // Go's net/http Transport's rule: a method without effects, or a request the server can
    // tell from its first sending; and here also a request with no key of an account (none,
    // or one made up), which a correct service refuses before it has any effect.
    const keyless = key === 'none' || key === 'made-up';
    const resend = request.resend === true || keyless || IDEMPOTENT_METHODS.has(request.method) || 'idempotency-key' in headers || 'x-idempotency-key' in headers;
    return this.#perform(key, request.method, request.path, headers, credentialHeader, body, request.on429 ?? 'wait', request.note, request.pace ?? true, resend);
  }

  async #perform(
    key: Exchange['key'],
    method: string,
    path: string,
    headers: Record<string, string>,
    credentialHeader: string | undefined,
    body: string | undefined,
    on429: 'wait' | 'return',
    note: string | undefined,
    pace: boolean,
    resend: boolean,
  ): Promise<Exchange> {
    const bucket = this.#options.bucketOf(method, path);
    // Unauthenticated and made-up-key requests are refused before any limit is counted.
    const gate = bucket && this.#options.pacing !== false && isKeyName(key) ? this.pacer.gate(key, bucket) : undefined;
    let retried = 0;
    let waitedSeconds = 0;
    const signal = this.#signal;
    for (;;) {
      if (signal?.aborted) throw reached(signal, `before sending ${method} ${path}`);
      if (pace) await gate?.acquire((ms) => this.#options.onWait?.(`waiting ${(ms / 1000).toFixed(1)} s for the ${key} key's ${bucket} window`), signal, `the ${key} key's ${bucket} window`);
      let exchange: Exchange;
      try {
        exchange = await this.#once(key, method, path, headers, credentialHeader, body, bucket, note, resend);
      } finally {
        if (pace) gate?.release();
      }
      exchange.retriedAfter429 = retried;
      const retryAfter = retryAfterSeconds(new Headers(exchange.responseHeaders), this.#options.now());
      gate?.observe(exchange.status, exchange.responseHeaders, exchange.status === 429 ? retryAfter : undefined);
      if (isKeyName(key)) this.#learnGenerationWindow(key, exchange);
      if (exchange.status !== 429 || on429 === 'return') return exchange;
      const seconds = Math.max(1, retryAfter ?? 1);
      // A wait longer than the window it is about is not taken: the checks report it.
      const window = bucket ? (this.#options.windowFor?.(bucket, integerHeader(exchange, 'ratelimit-limit')) ?? Infinity) : Infinity;
      if (retried >= 5 || seconds > window + 1) return exchange;
      retried++;
      // A key whose sandbox clock moves has its time moved over the wait, however long:
      // nothing is waited in real time, so the run's bound on waiting is not spent.
      if (isKeyName(key) && (await this.pacer.skip(key, seconds * 1000))) continue;
      if (waitedSeconds + seconds > this.#options.maxRateLimitWaitSeconds) return exchange;
      waitedSeconds += seconds;
      if (!gate || !pace) {
        this.#options.onWait?.(`waiting ${seconds} s (Retry-After) before resending ${method} ${path}`);
        await sleepWithin(this.#options.sleep, seconds * 1000, signal, `waiting ${seconds} s (Retry-After) to resend ${method} ${path}`);
      }
    }
  }

  /** Where GET /v1/me shows the generation windows too: the tightest of them. */
  #learnGenerationWindow(key: KeyName, exchange: Exchange): void {
    if (exchange.method !== 'GET' || exchange.path !== '/v1/me' || exchange.status !== 200 || !this.#options.windowsOf) return;
    const tightest = this.#options.windowsOf(exchange.json).sort((a, b) => a.remaining - b.remaining)[0];
    if (tightest) this.pacer.gate(key, 'generation').seed(tightest.limit, tightest.remaining, tightest.reset);
  }

  async #once(
    key: Exchange['key'],
    method: string,
    path: string,
    headers: Record<string, string>,
    credentialHeader: string | undefined,
    body: string | undefined,
    bucket: Bucket | undefined,
    note: string | undefined,
    resend: boolean,
  ): Promise<Exchange> {
    const startedAt = this.#options.now();
    const fetchImpl = this.#options.fetch ?? globalThis.fetch;
    const signal = this.#signal;
    const timeout = AbortSignal.timeout(this.#options.requestTimeoutMs);
    let response: Response | undefined;
    let bodyText: string;
    /** Why the request was sent a second time, if it was. */
    let resent: string | undefined;
    while (!response) {
      try {
        response = await fetchImpl(this.#options.baseUrl + path, {
          method,
          headers,
          ...(body === undefined ? {} : { body }),
          redirect: 'manual',
          signal: signal ? AbortSignal.any([timeout, signal]) : timeout,
        });
      } catch (error) {
        // The deadline's end is not the service's: it is no reason to call it unreachable.
        if (signal?.aborted) throw reached(signal, `waiting for the answer to ${method} ${path}`);
        const connection = failedConnection(error);
        // A connection the server closed as the request went out on it, not a service that
        // stopped answering: sent once more, on a new connection (the failed one is gone).
        if (resent === undefined && resend && !timeout.aborted && connection?.reused && !connection.answerBegun) {
          resent = describeNetworkError(error);
          continue;
        }
        throw new UnreachableError(`${method} ${path}: ${describeNetworkError(error)}${resent ? `, after ${resent} on a reused connection` : ''}`);
      }
    }
    try {
      bodyText = await response.text();
    } catch (error) {
      if (signal?.aborted) throw reached(signal, `reading the answer to ${method} ${path}`);
      throw error;
    }
    const responseHeaders: Record<string, string> = {};
    response.headers.forEach((value, name) => {
      responseHeaders[name.toLowerCase()] = value;
    });
    let json: unknown;
    if (bodyText) {
      try {
        json = JSON.parse(bodyText);
      } catch {
        json = undefined;
      }
    }
    const exchange: Exchange = {
      seq: this.log.length + 1,
      key,
      method,
      path,
      requestHeaders: redactCredential(headers, credentialHeader),
      requestBody: body,
      status: response.status,
      responseHeaders,
      bodyText,
      json,
      startedAt,
      durationMs: this.#options.now() - startedAt,
      bucket,
      retriedAfter429: 0,
      note: resent ? `${note ? `${note}; ` : ''}sent again on a new connection after ${resent} on a reused one, before any byte of the answer` : note,
      ...checkOf(),
    };
    this.log.push(exchange);
    return exchange;
  }
}

export function describeNetworkError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = (error as { cause?: unknown }).cause;
  if (cause instanceof Error) {
    const code = (cause as { code?: string }).code;
    return code ? `${code} (${cause.message})` : cause.message;
  }
  if (error.name === 'TimeoutError') return 'no answer within the request timeout';
  return error.message;
}

/** The methods Go's Transport sends again after a reset: they change nothing on the server. */
const IDEMPOTENT_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS']);

function lower(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));
}

function integerHeader(exchange: Exchange, name: string): number | undefined {
  const value = exchange.responseHeaders[name];
  return value !== undefined && /^\s*\d+\s*$/.test(value) ? Number(value) : undefined;
}

function redactCredential(headers: Record<string, string>, name: string | undefined): Record<string, string> {
  const out = { ...headers };
  const value = name ? out[name] : undefined;
  if (name && value) {
    const scheme = /^(\S+)\s+\S/.exec(value)?.[1];
    const token = scheme ? value.slice(scheme.length).trim() : value;
    // Keep the mode prefix (sk_test_ / sk_live_): it says which key without giving it away.
    const prefix = /^(sk_(?:test|live)_)/.exec(token)?.[1] ?? '';
    out[name] = `${scheme ? `${scheme} ` : ''}${prefix}…(redacted)`;
  }
  return out;
}

// Replaces every occurrence of a secret with its mode prefix and "…(redacted)": the one
// redaction the service's logs use too, in the contract's neutral ground.
export { redact };

/** A few lines that show an exchange in a failure message, with the given secrets redacted. */
export function excerpt(exchange: Exchange, secrets: readonly string[] = [], maxBody = 600): string {
  return redact(rawExcerpt(exchange, maxBody), secrets);
}

function rawExcerpt(exchange: Exchange, maxBody: number): string {
  const lines = [`> ${exchange.method} ${exchange.path}  [key: ${exchange.key}]`];
  if (exchange.requestBody !== undefined) lines.push(`> ${truncate(exchange.requestBody, 300)}`);
  lines.push(`< ${exchange.status}`);
  for (const [name, value] of Object.entries(exchange.responseHeaders)) {
    if (/^(content-type|location|retry-after|ratelimit-|x-ratelimit-|www-authenticate)/.test(name)) lines.push(`< ${name}: ${value}`);
  }
  if (exchange.bodyText) lines.push(`< ${truncate(exchange.bodyText, maxBody)}`);
  return lines.join('\n');
}

export function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}… (${text.length - max} more characters)`;
}
