// Every request the runner makes goes through here: it is paced (pacer.ts), recorded as
// an Exchange for the checks and the reports, and its secrets are redacted. The typed
// client (client/) sits on top through `fetchAdapter`; checks that must send what the
// typed client refuses to build (a bad type, no key, broken JSON) use `send`.
import { retryAfterSeconds } from '../../client/src/index.ts';
import { type Bucket, Pacer } from './pacer.ts';

export type KeyName = 'main' | 'second' | 'empty';
export type { Bucket };

export interface Exchange {
  seq: number;
  /** The credential sent: one of the configured keys, none, or a made-up one. */
  key: KeyName | 'none' | 'made-up';
  method: string;
  path: string;
  /** Lower-case names; Authorization is redacted. */
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
}

export interface SendRequest {
  /** A configured key, null for no Authorization header, or a made-up token. */
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
}

export class UnreachableError extends Error {
  override name = 'UnreachableError';
}

export interface HttpOptions {
  baseUrl: string;
  keys: Partial<Record<KeyName, string>>;
  requestTimeoutMs: number;
  /** The most seconds one request may spend waiting out 429s. */
  maxRateLimitWaitSeconds: number;
  now: () => number;
  sleep: (ms: number) => Promise<void>;
  onWait?: (message: string) => void;
  fetch?: typeof globalThis.fetch;
  /** false: never hold requests back (a stateless mock has no real limits to plan for). */
  pacing?: boolean;
}

const GENERATION_PATHS = new Set(['/v1/avatars', '/v1/avatar-videos']);

/** The bucket a request counts against (RL-BUCKETS), or none for odd paths. */
export function bucketOf(method: string, path: string): Bucket | undefined {
  const bare = path.split('?')[0] ?? path;
  if (method === 'POST' && GENERATION_PATHS.has(bare)) return 'generation';
  if (method === 'GET' && (bare === '/v1/me' || /^\/v1\/(avatars|avatar-videos)\/[^/]+$/.test(bare))) return 'read';
  return undefined;
}

export class Http {
  readonly log: Exchange[] = [];
  readonly pacer: Pacer;
  readonly #options: HttpOptions;
  readonly #byResponse = new WeakMap<Response, Exchange>();
  readonly #tokens: Map<string, KeyName>;

  constructor(options: HttpOptions) {
    this.#options = options;
    this.pacer = new Pacer(options.now, options.sleep);
    this.#tokens = new Map(
      Object.entries(options.keys).flatMap(([name, token]) => (token ? [[token, name as KeyName]] : [])),
    );
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
    if (request.key === null) {
      // no Authorization
    } else if (typeof request.key === 'string') {
      const token = this.#options.keys[request.key];
      if (!token) throw new Error(`no ${request.key} key was configured`);
      headers.authorization = `Bearer ${token}`;
      key = request.key;
    } else {
      headers.authorization = `Bearer ${request.key.token}`;
      key = 'made-up';
    }
    return this.#perform(key, request.method, request.path, headers, body, request.on429 ?? 'wait', request.note, request.pace ?? true);
  }

  /** A fetch for openapi-fetch: the typed client's requests are paced and recorded too. */
  readonly fetchAdapter = async (request: Request): Promise<Response> => {
    const url = new URL(request.url);
    const headers: Record<string, string> = {};
    request.headers.forEach((value, name) => {
      headers[name.toLowerCase()] = value;
    });
    const token = /^Bearer\s+(.+)$/i.exec(headers.authorization ?? '')?.[1];
    const key: Exchange['key'] = token === undefined ? 'none' : (this.#tokens.get(token) ?? 'made-up');
    const body = request.body ? await request.text() : undefined;
    const exchange = await this.#perform(key, request.method, url.pathname + url.search, headers, body, 'wait', undefined, true);
    const response = new Response(exchange.status === 204 || exchange.status === 304 ? null : exchange.bodyText, {
      status: exchange.status,
      headers: exchange.responseHeaders,
    });
    this.#byResponse.set(response, exchange);
    return response;
  };

  exchangeOf(response: Response): Exchange | undefined {
    return this.#byResponse.get(response);
  }

  async #perform(
    key: Exchange['key'],
    method: string,
    path: string,
    headers: Record<string, string>,
    body: string | undefined,
    on429: 'wait' | 'return',
    note: string | undefined,
    pace: boolean,
  ): Promise<Exchange> {
    const bucket = bucketOf(method, path);
    // Unauthenticated and made-up-key requests are refused before any limit is counted.
    const gate = bucket && this.#options.pacing !== false && (key === 'main' || key === 'second' || key === 'empty') ? this.pacer.gate(key, bucket) : undefined;
    let retried = 0;
    let waitedSeconds = 0;
    for (;;) {
      if (pace) await gate?.acquire((ms) => this.#options.onWait?.(`waiting ${(ms / 1000).toFixed(1)} s for the ${key} key's ${bucket} window`));
      let exchange: Exchange;
      try {
        exchange = await this.#once(key, method, path, headers, body, bucket, note);
      } finally {
        if (pace) gate?.release();
      }
      exchange.retriedAfter429 = retried;
      const retryAfter = retryAfterSeconds(new Headers(exchange.responseHeaders), this.#options.now());
      gate?.observe(exchange.status, exchange.responseHeaders, exchange.status === 429 ? retryAfter : undefined);
      if (key === 'main' || key === 'second' || key === 'empty') this.#learnGenerationWindow(key, exchange);
      if (exchange.status !== 429 || on429 === 'return') return exchange;
      const seconds = Math.max(1, retryAfter ?? 1);
      if (retried >= 5 || waitedSeconds + seconds > this.#options.maxRateLimitWaitSeconds) return exchange;
      retried++;
      waitedSeconds += seconds;
      if (!gate || !pace) {
        this.#options.onWait?.(`waiting ${seconds} s (Retry-After) before resending ${method} ${path}`);
        await this.#options.sleep(seconds * 1000);
      }
    }
  }

  /** GET /v1/me shows the generation window too (ND-ME): the tightest of minute and day. */
  #learnGenerationWindow(key: KeyName, exchange: Exchange): void {
    if (exchange.method !== 'GET' || exchange.path !== '/v1/me' || exchange.status !== 200) return;
    const limits = (exchange.json as { rate_limits?: { generation?: Record<string, unknown> } } | undefined)?.rate_limits?.generation;
    if (!limits || typeof limits !== 'object') return;
    const windows = Object.values(limits).filter(
      (w): w is { limit: number; remaining: number; reset: number } =>
        typeof w === 'object' && w !== null && ['limit', 'remaining', 'reset'].every((m) => typeof (w as Record<string, unknown>)[m] === 'number'),
    );
    const tightest = windows.sort((a, b) => a.remaining - b.remaining)[0];
    if (tightest) this.pacer.gate(key, 'generation').seed(tightest.limit, tightest.remaining, tightest.reset);
  }

  async #once(
    key: Exchange['key'],
    method: string,
    path: string,
    headers: Record<string, string>,
    body: string | undefined,
    bucket: Bucket | undefined,
    note: string | undefined,
  ): Promise<Exchange> {
    const startedAt = this.#options.now();
    const fetchImpl = this.#options.fetch ?? globalThis.fetch;
    let response: Response;
    try {
      response = await fetchImpl(this.#options.baseUrl + path, {
        method,
        headers,
        ...(body === undefined ? {} : { body }),
        redirect: 'manual',
        signal: AbortSignal.timeout(this.#options.requestTimeoutMs),
      });
    } catch (error) {
      throw new UnreachableError(`${method} ${path}: ${describeNetworkError(error)}`);
    }
    const bodyText = await response.text();
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
      requestHeaders: redactHeaders(headers),
      requestBody: body,
      status: response.status,
      responseHeaders,
      bodyText,
      json,
      startedAt,
      durationMs: this.#options.now() - startedAt,
      bucket,
      retriedAfter429: 0,
      note,
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

function lower(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));
}

function redactHeaders(headers: Record<string, string>): Record<string, string> {
  const out = { ...headers };
  if (out.authorization) {
    const token = /^Bearer\s+(.+)$/i.exec(out.authorization)?.[1] ?? '';
    // Keep the mode prefix (sk_test_ / sk_live_): it says which key without giving it away.
    const prefix = /^(sk_(?:test|live)_)/.exec(token)?.[1] ?? '';
    out.authorization = `Bearer ${prefix}…(redacted)`;
  }
  return out;
}

/** Replaces every occurrence of a secret with its mode prefix and "…(redacted)". */
export function redact(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) {
    if (secret.length < 6) continue;
    const prefix = /^(sk_(?:test|live)_|whsec_)/.exec(secret)?.[1] ?? '';
    out = out.split(secret).join(`${prefix}…(redacted)`);
  }
  return out;
}

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
