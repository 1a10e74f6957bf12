// `npm start`: the only place that reads the environment, opens ports and starts workers.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ConfigError, STORE_UNAVAILABLE_ADVICE, describeConfig, loadConfig, startWarnings, type Config } from './config.ts';
import { createAccount } from './domain/accounts.ts';
import { systemClock } from './domain/clock.ts';
import { FIRST_ACCOUNT_FILE, startService } from './runtime.ts';
import { StoreUnavailableError } from './domain/ports.ts';
import { STORE_DIR_MODE } from './storage/embedded/database.ts';
import { StoreLockedError } from './storage/embedded/serverLock.ts';
import { SchemaMissingError } from './storage/postgres-redis/database.ts';

/**
 * One line that says what went wrong at start and what to do; an error nobody foresaw
 * keeps its stack, which is then the most useful thing to show.
 */
function startFailure(error: NodeJS.ErrnoException, c: Config): string {
  if (error.syscall !== 'listen') {
    if (error instanceof StoreLockedError || error instanceof SchemaMissingError) return error.message;
    if (error instanceof StoreUnavailableError) return `${error.message}. ${STORE_UNAVAILABLE_ADVICE}`;
    if (error.code === 'EACCES' || error.code === 'EROFS') return `not allowed to write ${error.path ?? 'the data folder'}: give this user a DATA_DIR it can write.`;
    return error.stack ?? String(error);
  }
  if (error.code === 'EADDRINUSE') return `${c.host}:${c.port} is already in use by another process. Stop it, or set PORT to a free port (PORT=0 picks one).`;
  if (error.code === 'EACCES') return `not allowed to listen on ${c.host}:${c.port}. Ports below 1024 need privileges: set PORT to 1024 or above.`;
  if (error.code === 'EADDRNOTAVAIL') return `HOST=${c.host} is not an address of this machine.`;
  return error.stack ?? String(error);
}

if (process.argv.slice(2).some((arg) => arg === '--help' || arg === '-h')) {
  console.log(`Usage: npm start

Runs the Avatar Service API, configured by the environment alone (keys and secrets never
on a command line): PORT and HOST (default 3000 on 127.0.0.1), DATA_DIR for the embedded
store (default ./data), or DATABASE_URL and REDIS_URL for PostgreSQL + Redis, and
PUBLIC_BASE_URL; docs/running-the-server.md lists every setting. On its first start it
creates an account and prints its sandbox key.`);
  process.exit(0);
}

let config: Config;
try {
  config = loadConfig();
} catch (error) {
  if (error instanceof ConfigError) {
    console.error(`Invalid configuration: ${error.message}`);
    process.exit(2);
  }
  throw error;
}

// On stderr whatever the log level, before anything is served.
for (const line of startWarnings(config)) console.error(line);

const service = await startService(config).catch((error: unknown) => {
  console.error(`Cannot start: ${startFailure(error as NodeJS.ErrnoException, config)}`);
  process.exit(1);
});
const { log, store } = service;
// Printed, not logged: on stdout whatever the log level (with PORT=0 this line is where
// the port is learned), and once: a log line saying the same would repeat it.
console.log(`avatar service listening on ${service.url}`);
console.log(`avatar service ${describeConfig({ ...config, publicBaseUrl: service.domain.publicBaseUrl })}`);

// On an empty store, make the first sandbox account so `npm start` is usable at once.
// Its key and signing secret are shown once and never logged: on the terminal in
// sandbox mode; in production, where stdout is collected, in a file only this user reads.
const accounts = await store.accounts.countAccounts();
if (accounts === 0) {
  const created = await createAccount(store, systemClock, { name: 'Sandbox', mode: 'sandbox' });
  const credentials = [
    `  account_id:     ${created.account_id}`,
    `  api_key:        ${created.api_key}`,
    `  signing_secret: ${created.signing_secret}`,
  ];
  if (config.mode === 'production') {
    const file = join(config.dataDir, FIRST_ACCOUNT_FILE);
    // On PostgreSQL nothing else has made DATA_DIR: this file alone may create it.
    mkdirSync(config.dataDir, { recursive: true, mode: STORE_DIR_MODE });
    writeFileSync(file, `${credentials.join('\n')}\n`, { mode: 0o600 });
    console.log(`Created a sandbox account on this empty store; its key and signing secret are in ${file}, readable by this user only. Keep them elsewhere and delete the file.`);
  } else {
    console.log(
      ['', 'Created a sandbox account on this empty store (shown once; keep them):', ...credentials, `Try: curl -H "Authorization: Bearer ${created.api_key}" ${service.domain.publicBaseUrl}/v1/me`, ''].join('\n'),
    );
  }
} else {
  // Keys are kept as hashes, so a key printed on an earlier start cannot be shown again:
  // a user who lost it needs to be told where a new one comes from.
  console.log(await newKeyHint(accounts));
}

/** How to get a new key for this store: the operator command, pointed at the same store. */
async function newKeyHint(count: number): Promise<string> {
  const sameStore = config.databaseUrl ? ' (with the same DATABASE_URL and REDIS_URL)' : '';
  // `npm run admin` runs in the package's root, wherever this server was started from.
  const adminDefault = resolve(import.meta.dirname, '..', '..', 'data');
  const dataDir = config.databaseUrl || config.dataDir === adminDefault ? '' : `DATA_DIR=${shellQuote(config.dataDir)} `;
  const admin = `${dataDir}npm run admin --`;
  const listed = count === 1 ? (await store.accounts.listAccounts())[0] : undefined;
  const how = listed
    ? `${admin} issue-key --account ${listed.id}`
    : `${admin} list-accounts, then ${admin} issue-key --account <account_id>`;
  return `This store has ${count === 1 ? '1 account' : `${count} accounts`}; API keys are kept only as hashes and cannot be shown again. A new key: ${how}${sameStore}`;
}

function shellQuote(text: string): string {
  return /^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replaceAll("'", "'\\''")}'`;
}

let exiting = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (exiting) return;
    exiting = true;
    log.info({ signal }, 'shutting down: finishing or handing back work in flight');
    service.stop().then(
      () => process.exit(0),
      (error: unknown) => {
        log.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  });
}
