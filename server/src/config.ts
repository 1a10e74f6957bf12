// Typed, validated configuration. main.ts and admin.ts are the only readers of the
// environment; everything else receives a Config.
import { resolve } from 'node:path';
import { getHeapStatistics } from 'node:v8';
import ipaddr from 'ipaddr.js';
import type { ServiceMode } from './domain/webhookUrl.ts';
import { CONTRACT_BASE_DELAY_MS, CONTRACT_MAX_ATTEMPTS, CONTRACT_TIMEOUT_MS } from './domain/webhookSchedule.ts';

/** Which halves of the service a process runs: the HTTP API, the workers, or both. */
export type Role = 'all' | 'api' | 'worker';

export interface Config {
  role: Role;
  /** PostgreSQL and Redis, for several processes; both unset means the embedded store. */
  databaseUrl: string | null;
  redisUrl: string | null;
  redisPrefix: string;
  port: number;
  host: string;
  mode: ServiceMode;
  /** Folder of the embedded store. */
  dataDir: string;
  publicBaseUrl: string;
  /** PUBLIC_BASE_URL was not set: the base follows the port actually bound (PORT=0 included). */
  publicBaseUrlFromPort: boolean;
  logLevel: string;
  engine: { avatarMs: number; videoMs: number };
  worker: { concurrency: number; leaseMs: number; pollMs: number; maxAttempts: number };
  webhooks: { timeoutMs: number; maxAttempts: number; baseDelayMs: number; concurrency: number; perDestination: number; circuitFailures: number; pollMs: number };
  /** What the HTTP server gives a client: see the README's operations section. */
  http: { headersTimeoutMs: number; requestTimeoutMs: number; keepAliveTimeoutMs: number; maxConnections: number };
  shutdownGraceMs: number;
  /** Megabytes of finished records' answers an API process keeps (0: none). */
  readCacheMb: number;
  /** FILE_LINK_KEY: the key that signs file links (ND-FILE-LINKS); null: the one the store keeps, made at the first start. */
  fileLinkKey: string | null;
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

type Env = Record<string, string | undefined>;

function int(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max} (got "${raw}")`);
  }
  return value;
}

function oneOf<T extends string>(env: Env, name: string, fallback: T, allowed: readonly T[]): T {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!(allowed as readonly string[]).includes(raw)) throw new ConfigError(`${name} must be one of ${allowed.join(', ')} (got "${raw}")`);
  return raw as T;
}

/** This process's V8 heap limit in megabytes (`npm start` sets it with --max-old-space-size). */
const heapLimitMb = () => Math.floor(getHeapStatistics().heap_size_limit / 1_000_000);

/**
 * The share of the heap limit the kept answers may take: the rest is for what a process
 * holds anyway (key records, the limiter's counters, the compiled contract) and for the
 * garbage between two collections.
 */
const READ_CACHE_HEAP_SHARE = 4;

export function loadConfig(env: Env = process.env, cwd = process.cwd(), heapMb = heapLimitMb()): Config {
  const port = int(env, 'PORT', 3000, 0, 65535);
  const host = env.HOST || '127.0.0.1';
  const publicBaseUrl = (env.PUBLIC_BASE_URL || `http://localhost:${port}`).replace(/\/+$/, '');
  try {
    const url = new URL(publicBaseUrl);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error();
  } catch {
    throw new ConfigError(`PUBLIC_BASE_URL must be an http(s) URL (got "${publicBaseUrl}")`);
  }
  const databaseUrl = env.DATABASE_URL || null;
  const redisUrl = env.REDIS_URL || null;
  if (Boolean(databaseUrl) !== Boolean(redisUrl)) {
    throw new ConfigError('DATABASE_URL and REDIS_URL go together: set both for PostgreSQL + Redis, or neither for the embedded store');
  }
  const role = oneOf(env, 'ROLE', 'all', ['all', 'api', 'worker'] as const);
  if (role !== 'all' && !databaseUrl) {
    throw new ConfigError(`ROLE=${role} needs DATABASE_URL and REDIS_URL: the embedded store serves one process that is both API and worker`);
  }
  const mode = oneOf(env, 'SERVICE_MODE', 'sandbox', ['sandbox', 'production'] as const);
  // Records and webhooks link to their files through this base: a production server
  // that made it up would hand its customers http://localhost links.
  if (mode === 'production' && !env.PUBLIC_BASE_URL) {
    throw new ConfigError('SERVICE_MODE=production needs PUBLIC_BASE_URL (the https:// address clients reach this service at): the links in records and webhooks are made from it');
  }
  // A worker writes the file links of the webhook payloads, and serves no files itself.
  if (role === 'worker' && !env.PUBLIC_BASE_URL) {
    throw new ConfigError('ROLE=worker needs PUBLIC_BASE_URL (the API\'s public address): the links in the webhook payloads it sends must point at the API, not at the worker');
  }
  return {
    role,
    databaseUrl,
    redisUrl,
    redisPrefix: env.REDIS_PREFIX ?? '',
    port,
    host,
    mode,
    dataDir: resolve(cwd, env.DATA_DIR || 'data'),
    publicBaseUrl,
    publicBaseUrlFromPort: !env.PUBLIC_BASE_URL,
    logLevel: oneOf(env, 'LOG_LEVEL', 'info', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const),
    engine: {
      avatarMs: int(env, 'ENGINE_AVATAR_MS', 1500, 0, 3_600_000),
      videoMs: int(env, 'ENGINE_VIDEO_MS', 3000, 0, 3_600_000),
    },
    worker: {
      concurrency: int(env, 'WORKER_CONCURRENCY', 4, 1, 256),
      leaseMs: int(env, 'JOB_LEASE_MS', 30_000, 1000, 3_600_000),
      pollMs: int(env, 'JOB_POLL_MS', 500, 10, 60_000),
      maxAttempts: int(env, 'JOB_MAX_ATTEMPTS', 3, 1, 100),
    },
    webhooks: {
      // The defaults are the contract's delivery (info.x-webhook-delivery).
      timeoutMs: int(env, 'WEBHOOK_TIMEOUT_MS', CONTRACT_TIMEOUT_MS, 100, 60_000),
      maxAttempts: int(env, 'WEBHOOK_MAX_ATTEMPTS', CONTRACT_MAX_ATTEMPTS, 1, 20),
      baseDelayMs: int(env, 'WEBHOOK_BASE_DELAY_MS', CONTRACT_BASE_DELAY_MS, 10, 3_600_000),
      concurrency: int(env, 'WEBHOOK_CONCURRENCY', 32, 1, 1024),
      perDestination: int(env, 'WEBHOOK_DESTINATION_CONCURRENCY', 8, 1, 1024),
      circuitFailures: int(env, 'WEBHOOK_CIRCUIT_FAILURES', 5, 1, 1000),
      pollMs: int(env, 'WEBHOOK_POLL_MS', 1000, 10, 60_000),
    },
    http: httpLimits(env),
    shutdownGraceMs: int(env, 'SHUTDOWN_GRACE_MS', 10_000, 0, 600_000),
    readCacheMb: readCacheMb(env, heapMb),
    fileLinkKey: fileLinkKey(env),
  };
}

/** Characters a FILE_LINK_KEY has at least: 32 random ones are some 190 bits, as an HMAC-SHA256 key should be (RFC 2104, section 3). */
const FILE_LINK_KEY_MIN_LENGTH = 32;

function fileLinkKey(env: Env): string | null {
  const raw = env.FILE_LINK_KEY;
  if (raw === undefined || raw === '') return null;
  // The value itself is never repeated: it is a secret.
  if (raw.length < FILE_LINK_KEY_MIN_LENGTH || /\s/u.test(raw)) {
    throw new ConfigError(`FILE_LINK_KEY must be at least ${FILE_LINK_KEY_MIN_LENGTH} characters without spaces (got ${raw.length} characters); leave it unset to have the store keep one`);
  }
  return raw;
}

function readCacheMb(env: Env, heapMb: number): number {
  const mb = int(env, 'READ_CACHE_MB', 4, 0, 4096);
  const most = Math.floor(heapMb / READ_CACHE_HEAP_SHARE);
  if (mb > most) {
    throw new ConfigError(
      `READ_CACHE_MB (${mb}) must be at most a quarter of this process's heap limit (${heapMb} MB, so ${most}): lower it, or raise the limit with node --max-old-space-size`,
    );
  }
  return mb;
}

function httpLimits(env: Env): Config['http'] {
  const headersTimeoutMs = int(env, 'HTTP_HEADERS_TIMEOUT_MS', 10_000, 100, 600_000);
  const requestTimeoutMs = int(env, 'HTTP_REQUEST_TIMEOUT_MS', 60_000, 100, 3_600_000);
  if (requestTimeoutMs < headersTimeoutMs) {
    throw new ConfigError(`HTTP_REQUEST_TIMEOUT_MS (${requestTimeoutMs}) must be at least HTTP_HEADERS_TIMEOUT_MS (${headersTimeoutMs}): the headers are part of the request`);
  }
  return {
    headersTimeoutMs,
    requestTimeoutMs,
    keepAliveTimeoutMs: int(env, 'HTTP_KEEP_ALIVE_TIMEOUT_MS', 5000, 100, 600_000),
    maxConnections: int(env, 'HTTP_MAX_CONNECTIONS', 4096, 1, 1_000_000),
  };
}

/** Whether `host` (HOST) accepts connections from this machine only. */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '');
  if (bare.toLowerCase().replace(/\.+$/, '') === 'localhost') return true;
  if (!ipaddr.isValid(bare)) return false;
  const address = ipaddr.process(bare);
  return address.range() === 'loopback';
}

/**
 * What a start says before serving, one line each: a sandbox server reachable beyond
 * this machine takes http:// and private webhook targets and sandbox keys from anyone
 * who reaches it, which is for local development, not for a team's shared server.
 */
export function startWarnings(c: Config): string[] {
  if (c.mode !== 'sandbox' || isLoopbackHost(c.host)) return [];
  return [
    `warning: sandbox mode (SERVICE_MODE is not production) listening beyond loopback on ${c.host}: webhooks go to http:// and private addresses of this network; set SERVICE_MODE=production for a shared server, or HOST=127.0.0.1 to keep it local`,
  ];
}

/** What an operator checks when the store cannot be reached (start and operator command alike). */
export const STORE_UNAVAILABLE_ADVICE = 'Check DATABASE_URL and REDIS_URL, and that both servers are running.';

/** The one-line summary printed at start; it names no secret. */
export function describeConfig(c: Config): string {
  const store = c.databaseUrl ? `postgres:${redactUrl(c.databaseUrl)}+redis:${redactUrl(c.redisUrl!)}` : `embedded:${c.dataDir}`;
  return `role=${c.role} mode=${c.mode} listen=${c.host}:${c.port} public=${c.publicBaseUrl} store=${store} engine=avatar:${c.engine.avatarMs}ms,video:${c.engine.videoMs}ms${c.role === 'api' ? '' : ` workers=${c.worker.concurrency}`}`;
}

/** A connection URL without its password, fit for a log line. */
export function redactUrl(raw: string): string {
  try {
    const url = new URL(raw);
    if (url.password) url.password = '***';
    return url.toString();
  } catch {
    return '(unparsable URL)';
  }
}
