// The ceilings of the read and write comparisons: Koa + @koa/router and nothing else,
// answering GET /v1/avatars/:id with the same JSON the server sends for the avatar under
// test, and (with --sqlite) POST /v1/avatars with one SQLite insert of the body read as
// JSON, on a file set up as the embedded store sets up its own (WAL, synchronous=NORMAL).
// Koa serializes the object on every request, as the server does; there is no auth, no
// rate limit, no validation, no credits and no logging.
//
//   node scripts/bench/bare-koa.ts --port 4100 --body avatar.json [--sqlite writes.db]
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { DatabaseSync } from 'node:sqlite';
import { parseArgs } from 'node:util';
import Router from '@koa/router';
import Koa from 'koa';

export function createBareApp(body: unknown, sqliteFile?: string): Koa {
  const app = new Koa();
  const router = new Router();
  router.get('/v1/avatars/:id', (ctx) => {
    ctx.body = body;
  });
  if (sqliteFile) {
    const db = new DatabaseSync(sqliteFile);
    db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; CREATE TABLE IF NOT EXISTS avatars (id TEXT PRIMARY KEY, body TEXT NOT NULL, created_at INTEGER NOT NULL)');
    const insert = db.prepare('INSERT INTO avatars (id, body, created_at) VALUES (?, ?, ?)');
    router.post('/v1/avatars', async (ctx) => {
      const chunks: Buffer[] = [];
      for await (const chunk of ctx.req) chunks.push(chunk as Buffer);
      const input = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
      const record = { id: randomUUID(), ...input, status: 'queued', created_at: Date.now() };
      insert.run(record.id, JSON.stringify(input), record.created_at);
      ctx.status = 202;
      ctx.body = record;
    });
  }
  app.use(router.routes());
  return app;
}

if (import.meta.main) {
  const { values } = parseArgs({ options: { port: { type: 'string' }, body: { type: 'string' }, sqlite: { type: 'string' } } });
  if (!values.port || !values.body) {
    console.error('usage: node scripts/bench/bare-koa.ts --port <port> --body <file.json> [--sqlite <file.db>]');
    process.exit(2);
  }
  const body: unknown = JSON.parse(readFileSync(values.body, 'utf8'));
  const server = createServer(createBareApp(body, values.sqlite).callback());
  // Same keep-alive as the server's runtime.ts, so connections are treated alike.
  server.keepAliveTimeout = 5000;
  server.listen(Number(values.port), '127.0.0.1');
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      server.closeAllConnections();
      server.close(() => process.exit(0));
    });
  }
}
