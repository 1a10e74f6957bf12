// Assembles one running service from a Config: store, engine, HTTP server, workers.
// main.ts adds the process concerns (signals, printing); tests call this directly.
import { randomBytes } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { createApp } from './app.ts';
import type { Config } from './config.ts';
import { systemClock, type Clock } from './domain/clock.ts';
import { createFinishedRecords } from './domain/finishedRecords.ts';
import { createKeyCache } from './domain/keyCache.ts';
import type { DomainDeps } from './domain/deps.ts';
import { createBuiltinEngine } from './engine/builtin.ts';
import { RENDERS_DIR, sweepRenderFolders } from './engine/renderFolders.ts';
import type { GenerationEngine } from './domain/engine.ts';
import { createLogger } from './logger.ts';
import { redactSecretShapes } from '../../contract/secrets.ts';
import { createMetrics } from './metrics.ts';
import type { BulkLoader } from './storage/bulk.ts';
import { openEmbeddedBulkLoader } from './storage/embedded/bulk.ts';
import { createEmbeddedStore } from './storage/embedded/index.ts';
import { openPostgresBulkLoader } from './storage/postgres-redis/bulk.ts';
import { createPostgresRedisStore } from './storage/postgres-redis/index.ts';
import { errorForLog, type Store } from './domain/ports.ts';
import { restoreKeptFiles } from './domain/restoreFiles.ts';
import { createAccountTimer } from './workers/accountTimer.ts';
import { answerConnectionErrors } from './http/connectionErrors.ts';
import type { Resolver } from './workers/deliver.ts';
import { createJobRunner, type JobRunner } from './workers/jobRunner.ts';
import { createWebhookDispatcher, type WebhookDispatcher } from './workers/webhookDispatcher.ts';

export const EMBEDDED_FILE = 'avatar-service.db';
/** Where a server started in production mode leaves the first account's credentials (mode 0600). */
export const FIRST_ACCOUNT_FILE = 'first-account.txt';
/** Held by the one server of an embedded store while it runs. */
export const SERVER_LOCK_FILE = 'server.lock';

export interface Service {
  url: string;
  server: Server;
  store: Store;
  domain: DomainDeps;
  runner: JobRunner;
  dispatcher: WebhookDispatcher;
  log: Logger;
  /** Stops accepting requests, lets work in flight finish or hands it back, closes the store. */
  stop(): Promise<void>;
}

export interface ServiceOverrides {
  clock?: Clock;
  engine?: GenerationEngine;
  store?: Store;
  log?: Logger;
  /** DNS for webhook delivery; tests replace it to prove the address checks. */
  resolve?: Resolver;
  random?: () => number;
}

/**
 * The store a Config names. Only the serving process of an embedded store recovers its
 * orphaned jobs; tools that open it beside a server must not. On PostgreSQL, leases
 * expire on their own, since other workers may be alive.
 */
export async function openStore(config: Config, options: { serving: boolean }): Promise<Store> {
  if (config.databaseUrl && config.redisUrl) {
    return createPostgresRedisStore({ databaseUrl: config.databaseUrl, redisUrl: config.redisUrl, redisPrefix: config.redisPrefix });
  }
  return createEmbeddedStore(join(config.dataDir, EMBEDDED_FILE), {
    recoverOrphanedJobs: options.serving,
    serverLockFile: options.serving ? join(config.dataDir, SERVER_LOCK_FILE) : undefined,
  });
}

/**
 * The bulk loader of the store a Config names, for the benchmark and the tests that need a
 * large store; never part of a running service. Open the store first (openStore makes its
 * schema); the loader has a connection of its own and is closed apart from the store.
 */
export function openBulkLoader(config: Config): BulkLoader {
  if (config.databaseUrl && config.redisUrl) return openPostgresBulkLoader(config.databaseUrl);
  return openEmbeddedBulkLoader(join(config.dataDir, EMBEDDED_FILE));
}

export async function startService(config: Config, overrides: ServiceOverrides = {}): Promise<Service> {
  const store = overrides.store ?? (await openStore(config, { serving: true }));
  try {
    return await serve(config, overrides, store);
  } catch (error) {
    // A start that fails closes what it opened, and with it the embedded store's server lock.
    if (!overrides.store) await store.close().catch(() => undefined);
    throw error;
  }
}

async function serve(config: Config, overrides: ServiceOverrides, store: Store): Promise<Service> {
  const log = overrides.log ?? createLogger(config.logLevel, redactSecretShapes);
  const clock = overrides.clock ?? systemClock;
  const timer = createAccountTimer(store, clock, config.worker.pollMs);
  const rendersRoot = join(config.dataDir, RENDERS_DIR);
  // What the renders of a server killed on this data folder left: its render processes
  // still running, if any, and their folders. Before this server renders anything.
  const swept = await sweepRenderFolders(rendersRoot);
  if (swept.renders > 0) log.warn(swept, 'removed what the renders of a server that was stopped without its shutdown left');
  // A worker that cannot keep its renders there says so at start (as a data folder it
  // cannot write), rather than failing every video.
  if (config.role !== 'api' && !overrides.engine) await mkdir(rendersRoot, { recursive: true, mode: 0o700 });
  const engine =
    overrides.engine ?? createBuiltinEngine({ ...config.engine, rendersRoot, wait: (job, ms, signal) => timer.wait(job.accountId, ms, signal) });
  const metrics = createMetrics({ activeJobs: () => store.jobs.countActiveJobs(), pendingEvents: () => store.outbox.countPending() });
  // Every process signs and verifies file links with the one key: the operator's, or the store's.
  const fileLinkKey = config.fileLinkKey ?? (await store.files.linkKey(randomBytes(32).toString('base64url')));
  const dispatcher = createWebhookDispatcher(
    store,
    clock,
    { mode: config.mode, ...config.webhooks, resolve: overrides.resolve, random: overrides.random, fileLinkKey },
    log,
    metrics,
  );
  let runner: JobRunner | undefined;
  const creditsReported = new Set<string>();
  const domain: DomainDeps = {
    store,
    keys: createKeyCache(),
    finished: createFinishedRecords({ maxChars: config.readCacheMb * 1_000_000 }),
    clock,
    publicBaseUrl: config.publicBaseUrl,
    fileLinkKey,
    mode: config.mode,
    onJobQueued: () => runner?.wake(),
    onWebhookRecorded: () => dispatcher.wake(),
    onClockAdvanced: (accountId) => {
      timer.advanced(accountId);
      dispatcher.wake();
    },
    onCreditsOutOfRange: (accountId, balance) => {
      // Once per account, month and amount in a process: every read of it would say the same.
      const reported = `${accountId} ${balance.period} ${balance.held}`;
      if (creditsReported.has(reported)) return;
      if (creditsReported.size >= 1000) creditsReported.clear();
      creditsReported.add(reported);
      log.warn(
        { accountId, period: balance.period, held: balance.held, readAs: balance.quota },
        'account holds credits past the most a month holds (MAX_CREDITS); read as the bound until an operator brings them within it',
      );
    },
  };
  runner = createJobRunner(domain, engine, config.worker, log, metrics);

  const app = createApp({ domain, engine, log, metrics, api: config.role !== 'worker' });
  const server = createServer(
    {
      headersTimeout: config.http.headersTimeoutMs,
      requestTimeout: config.http.requestTimeoutMs,
      keepAliveTimeout: config.http.keepAliveTimeoutMs,
      // The two timeouts above are enforced on this beat; Node's default (30 s) would let
      // a slow client run that much past them.
      connectionsCheckingInterval: Math.min(1000, Math.ceil(config.http.headersTimeoutMs / 4)),
      // A request without Host is refused by the app, as a problem with a request ID
      // (http/connectionErrors.ts's refuseAmbiguousHeaders), not by Node's bare 400.
      requireHostHeader: false,
    },
    app.callback(),
  );
  // Connections beyond this are closed as they arrive, before any byte is read.
  server.maxConnections = config.http.maxConnections;
  answerConnectionErrors(server, log);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  // With PORT=0 the port is known only now; the links in records must name it.
  if (config.publicBaseUrlFromPort) domain.publicBaseUrl = `http://localhost:${port}`;
  const working = config.role !== 'api';
  // Videos of a store from before jobs kept their files get their MP4 made again (restoreFiles.ts).
  const restoring = new AbortController();
  let restored: Promise<unknown> = Promise.resolve();
  if (working) {
    runner.start();
    dispatcher.start();
    restored = restoreKeptFiles(domain, engine, restoring.signal).then(
      (outcome) => {
        if (outcome.restored > 0) log.info({ restored: outcome.restored }, 'made again the files of videos made before jobs kept them');
        for (const { jobId, error } of outcome.failed) log.error({ jobId, err: errorForLog(error) }, 'could not make again the file of a video made before jobs kept them; tried again at the next start');
      },
      (error: unknown) => {
        if (!restoring.signal.aborted) log.error({ err: errorForLog(error) }, 'the files of videos made before jobs kept them were not all made again; tried again at the next start');
      },
    );
  }

  let stopping: Promise<void> | undefined;
  return {
    url: `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`,
    server,
    store,
    domain,
    runner,
    dispatcher,
    log,
    stop() {
      stopping ??= (async () => {
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeIdleConnections();
        restoring.abort();
        await runner.stop(config.shutdownGraceMs);
        await dispatcher.stop();
        await restored;
        server.closeAllConnections();
        await closed;
        await engine.close?.();
        await store.close();
      })();
      return stopping;
    },
  };
}
