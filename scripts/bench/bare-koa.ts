// The ceiling of the read comparison: Koa + @koa/router and nothing else, answering
// GET /v1/avatars/:id with the same JSON the server sends for the avatar under test.
// Koa serializes the object on every request, as the server does; there is no auth,
// no rate limit, no store and no logging.
//
//   node scripts/bench/bare-koa.ts --port 4100 --body avatar.json
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';
import Router from '@koa/router';
import Koa from 'koa';

export function createBareApp(body: unknown): Koa {
  const app = new Koa();
  const router = new Router();
  router.get('/v1/avatars/:id', (ctx) => {
    ctx.body = body;
  });
  app.use(router.routes());
  return app;
}

if (import.meta.main) {
  const { values } = parseArgs({ options: { port: { type: 'string' }, body: { type: 'string' } } });
  if (!values.port || !values.body) {
    console.error('usage: node scripts/bench/bare-koa.ts --port <port> --body <file.json>');
    process.exit(2);
  }
  const body: unknown = JSON.parse(readFileSync(values.body, 'utf8'));
  const server = createServer(createBareApp(body).callback());
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
