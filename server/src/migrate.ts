// `npm run migrate`: applies pending PostgreSQL migrations and exits. The server also
// applies them on start; running this first keeps schema changes out of the rollout.
import { ConfigError, loadConfig, redactUrl } from './config.ts';
import { createPool, migrate } from './storage/postgres-redis/database.ts';

if (process.argv.slice(2).some((arg) => arg === '--help' || arg === '-h')) {
  console.log(`Usage: DATABASE_URL=postgres://... npm run migrate

Applies the pending PostgreSQL migrations to DATABASE_URL and exits; the server also
applies them when it starts. The embedded store migrates itself when it opens.`);
  process.exit(0);
}

try {
  const config = loadConfig();
  if (!config.databaseUrl) throw new ConfigError('DATABASE_URL is not set: the embedded store migrates itself when it opens');
  const pool = createPool(config.databaseUrl);
  try {
    const applied = await migrate(pool);
    console.log(applied.length ? `applied migrations ${applied.join(', ')} to ${redactUrl(config.databaseUrl)}` : `${redactUrl(config.databaseUrl)} is up to date`);
  } finally {
    await pool.end();
  }
} catch (error) {
  console.error(`migrate: ${(error as Error).message}`);
  process.exitCode = error instanceof ConfigError ? 2 : 1;
}
