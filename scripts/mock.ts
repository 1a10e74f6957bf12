// A Prism mock of generated/openapi.json, for client authors who want the API before
// the server runs (`npm run mock`) and for tests (`startMock`). Prism answers with the
// documented examples, enforces the bearer scheme and validates request bodies. In front
// of it sits a thin layer of ours for the one rule Prism cannot read from the document:
// a query parameter the operation does not take is refused with the operation's 422
// (ND-QUERY), as the server refuses it, where Prism alone would ignore it. With
// `upstream`, the same Prism is a validating proxy in front of a real server, which
// applies that rule itself.
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer as createHttpServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer } from 'node:net';
import { readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { queryParameters } from '../contract/operations.ts';
import type { JsonObject } from '../contract/schemas.ts';
import { answerHelp } from './help.ts';

const ROOT = resolve(import.meta.dirname, '..');
const BUNDLE = join(ROOT, 'generated', 'openapi.json');
// Prism's entry point run with this Node: Prism 5.16 needs Node >= 24.18, and the
// .bin shim's `#!/usr/bin/env node` may pick the system's older Node.
const PRISM = join(ROOT, 'node_modules', '@stoplight', 'prism-cli', 'dist', 'index.js');
const OUTPUT_TAIL = 4096;

export interface MockOptions {
  port?: number;
  host?: string;
  document?: string;
  // 'inherit' passes Prism's log through to our output (the CLI); 'quiet' keeps only
  // its tail, for error messages (tests).
  logs?: 'inherit' | 'quiet';
  readyTimeoutMs?: number;
  /**
   * Prism's validating proxy instead of the mock: requests go to this base URL and every
   * exchange is checked against the document on the way, each violation a log line.
   */
  upstream?: string;
  /** Called with each line Prism writes (its log), for those who judge it. */
  onLine?: (line: string) => void;
}

export interface MockServer {
  url: string;
  stop(): Promise<void>;
  signal(signal: NodeJS.Signals): void;
  // Prism's exit code (or 128 + signal number); resolves whenever Prism ends.
  exited: Promise<number>;
}

/** A port nobody listens on right now (Prism itself cannot be told to pick one). */
export function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen(0, host, () => {
      const { port } = server.address() as { port: number };
      server.close(() => done(port));
    });
  });
}

/** Starts Prism on `port` (0: any free port) and resolves once it answers. */
export async function startMock(options: MockOptions = {}): Promise<MockServer> {
  const { host = '127.0.0.1', document = BUNDLE, logs = 'quiet', readyTimeoutMs = 30_000 } = options;
  // A mock listens through our front layer on the port asked for, Prism behind it on a
  // free port of its own; a proxy is Prism alone.
  const front = options.upstream ? undefined : await listenFront(host, options.port ?? 4010, queryRulesOf(document));
  const port = front ? await freePort(host) : options.port === 0 ? await freePort(host) : (options.port ?? 4010);
  const mode = options.upstream ? ['proxy', document, options.upstream] : ['mock', document];
  const child = spawn(process.execPath, [PRISM, ...mode, '--port', String(port), '--host', host], {
    cwd: ROOT,
    env: { ...process.env, SCARF_ANALYTICS: 'false' },
    // Its own process group, so stop() reaches anything Prism forks, and a Ctrl-C in a
    // terminal reaches Prism only through us.
    detached: true,
    // Piped even for the CLI: start-up is read from Prism's own log (see below).
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output = captureTail(child);
  if (options.onLine) {
    const onLine = options.onLine;
    let partial = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      const lines = (partial + chunk.toString('utf8')).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) onLine(line);
    });
  }
  // A detached Prism would outlive us: if this process ends first, take it along.
  const orphanGuard = () => killGroup(child, 'SIGKILL');
  process.once('exit', orphanGuard);
  const exited = new Promise<number>((done) => {
    child.once('exit', (code, signal) => done(code ?? 128 + signalNumber(signal)));
    child.once('error', () => done(127));
  }).finally(() => process.off('exit', orphanGuard));
  const origin = (p: number) => `http://${host.includes(':') ? `[${host}]` : host}:${p}`;
  const prismUrl = origin(port);
  const url = front ? origin((front.server.address() as { port: number }).port) : prismUrl;
  front?.forwardTo(prismUrl);
  if (logs === 'inherit') {
    // Prism's log names the port Prism itself listens on behind our layer, which answers
    // without the layer's rule: each line names the one URL to use instead, and Prism's
    // "listening" line gives way to ours (usage()), so one URL is printed.
    passLines(child.stdout, process.stdout, (line) => (line.includes('Prism is listening on') ? undefined : line.replaceAll(prismUrl, url)));
    passLines(child.stderr, process.stderr, (line) => line.replaceAll(prismUrl, url));
  }
  void exited.then(() => front?.close());
  const server: MockServer = {
    url,
    exited,
    signal: (sig) => killGroup(child, sig),
    stop: async () => {
      killGroup(child, 'SIGTERM');
      const timer = setTimeout(() => killGroup(child, 'SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
      await front?.close();
    },
  };
  try {
    await waitUntilAnswering(child, prismUrl, url, exited, readyTimeoutMs);
  } catch (error) {
    await server.stop();
    // The CLI has already shown Prism's output; a test has not.
    const said = logs === 'quiet' && output() ? `\nPrism said:\n${output()}` : '';
    throw new Error(`${(error as Error).message}${said}`);
  }
  return server;
}

// Ready means: our Prism says it listens, then answers a request. Probing the port
// alone is not enough: when the port is taken, the other program answers the probe
// while Prism dies with EADDRINUSE. The request is a CORS preflight, which Prism
// answers without a line in its request log.
async function waitUntilAnswering(child: ChildProcess, prismUrl: string, url: string, exited: Promise<number>, timeoutMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const listening = new Promise<void>((done) => {
    let seen = '';
    child.stdout?.on('data', function watch(chunk: Buffer) {
      seen = (seen + chunk.toString('utf8')).slice(-1_000);
      if (!seen.includes('Prism is listening on')) return;
      child.stdout?.off('data', watch);
      done();
    });
  });
  const died = exited.then((code) => {
    throw new Error(`Prism exited with code ${code} before listening on ${prismUrl}`);
  });
  const late = new Promise<never>((_, fail) => {
    timer = setTimeout(() => fail(new Error(`Prism did not listen on ${prismUrl} within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    await Promise.race([listening, died, late]);
    await fetch(url, {
      method: 'OPTIONS',
      headers: { Origin: 'http://localhost', 'Access-Control-Request-Method': 'GET' },
      signal: AbortSignal.timeout(5_000),
    });
  } finally {
    clearTimeout(timer);
    died.catch(() => {});
  }
}

/** The query parameters an operation takes, found by the method and path of a request; undefined when no operation matches. */
type QueryRules = (method: string, path: string) => readonly string[] | undefined;

function queryRulesOf(document: string): QueryRules {
  const doc = JSON.parse(readFileSync(document, 'utf8')) as JsonObject;
  const taken = queryParameters(doc);
  const routes = Object.entries(doc.paths as Record<string, Record<string, { operationId?: string }>>).flatMap(([template, item]) =>
    Object.entries(item)
      .filter(([, operation]) => typeof operation?.operationId === 'string')
      .map(([method, operation]) => ({
        method: method.toUpperCase(),
        // A template's {name} is one path segment; literal segments are matched as they are.
        path: new RegExp(`^${template.split(/\{[^}]+\}/).map((part) => part.replace(/[.*+?^$()|[\]\\]/g, '\\$&')).join('[^/]+')}$`),
        taken: taken.get(operation.operationId!) ?? [],
      })),
  );
  return (method, path) => routes.find((r) => r.method === (method === 'HEAD' ? 'GET' : method) && r.path.test(path))?.taken;
}

interface Front {
  server: Server;
  forwardTo(prismUrl: string): void;
  close(): Promise<void>;
}

/**
 * Our layer in front of Prism. A request with a query parameter its operation does not
 * take goes on to Prism without it and with "Prefer: code=422, example=unknown_parameter",
 * so Prism still checks the key first (401) and answers the operation's documented 422
 * with its headers; the parameter is named in sl-violations, where Prism names what a
 * body breaks. Every other request passes through untouched.
 */
async function listenFront(host: string, port: number, rules: QueryRules): Promise<Front> {
  let prism: URL | undefined;
  const server = createHttpServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://mock');
    const taken = rules(req.method ?? 'GET', url.pathname);
    const unknown = taken ? [...new Set(url.searchParams.keys())].filter((name) => !taken.includes(name)) : [];
    const headers = { ...req.headers };
    if (unknown.length > 0) {
      for (const name of unknown) url.searchParams.delete(name);
      headers.prefer = 'code=422, example=unknown_parameter';
    }
    const forwarded = httpRequest({ host: prism!.hostname.replace(/^\[|\]$/g, ''), port: prism!.port, method: req.method, path: `${url.pathname}${url.search}`, headers }, (answer) => {
      const out = { ...answer.headers };
      if (unknown.length > 0 && answer.statusCode === 422) {
        const said = JSON.parse(String(out['sl-violations'] ?? '[]')) as unknown[];
        const ours = unknown.map((name) => ({ location: ['request', 'query', name], severity: 'Error', code: 'additionalProperties', message: `Request query parameter ${name} is not one this operation takes` }));
        out['sl-violations'] = JSON.stringify([...said, ...ours]);
      }
      res.writeHead(answer.statusCode ?? 502, out);
      answer.pipe(res);
    });
    forwarded.on('error', (error) => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
      res.end(`The mock's Prism did not answer: ${error.message}\n`);
    });
    req.pipe(forwarded);
  });
  await new Promise<void>((done, fail) => {
    server.once('error', (error: NodeJS.ErrnoException) => fail(new Error(`the mock cannot listen on ${host}:${port}: ${error.code ?? error.message}`)));
    server.listen(port, host, done);
  });
  return {
    server,
    forwardTo: (prismUrl) => {
      prism = new URL(prismUrl);
    },
    close: () =>
      new Promise<void>((done) => {
        server.close(() => done());
        server.closeAllConnections();
      }),
  };
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  try {
    process.kill(-child.pid, signal);
  } catch (error) {
    // ESRCH: the group is already gone, which is what we wanted.
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
}

/** Copies a stream line by line through `edit`, which may drop a line (undefined). */
function passLines(from: NodeJS.ReadableStream | null, to: NodeJS.WritableStream, edit: (line: string) => string | undefined): void {
  let partial = '';
  from?.on('data', (chunk: Buffer) => {
    const lines = (partial + chunk.toString('utf8')).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) {
      const edited = edit(line);
      if (edited !== undefined) to.write(`${edited}\n`);
    }
  });
  from?.on('end', () => {
    const edited = partial ? edit(partial) : undefined;
    if (edited !== undefined) to.write(edited);
  });
}

function captureTail(child: ChildProcess): () => string {
  let tail = '';
  const keep = (chunk: Buffer) => {
    tail = (tail + chunk.toString('utf8')).slice(-OUTPUT_TAIL);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  return () => tail.trim();
}

function signalNumber(signal: NodeJS.Signals | null): number {
  const numbers: Partial<Record<NodeJS.Signals, number>> = { SIGHUP: 1, SIGINT: 2, SIGKILL: 9, SIGTERM: 15 };
  return (signal && numbers[signal]) ?? 0;
}

// How to ask the mock for each state and error, from the examples of the document.
export function usage(url: string, document: string = BUNDLE): string {
  type Op = { responses?: Record<string, { content?: Record<string, { examples?: Record<string, unknown> }> }> };
  const doc = JSON.parse(readFileSync(document, 'utf8')) as { paths: Record<string, Record<string, Op>> };
  const lines = [
    `Mock API on ${url} (a Prism mock of ${relative(process.cwd(), document)}): use this URL as the base URL`,
    'Every /v1 request needs a bearer key, e.g. -H "Authorization: Bearer sk_test_x".',
    'Pick a state with "Prefer: example=<name>" and an error with "Prefer: code=<status>":',
  ];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      const success = Object.entries(op.responses ?? {}).find(([code]) => code.startsWith('2'))?.[1];
      const names = Object.values(success?.content ?? {}).flatMap((media) => Object.keys(media.examples ?? {}));
      if (names.length > 1) lines.push(`  ${method.toUpperCase()} ${path}: example=${names.join(' | ')}`);
    }
  }
  lines.push(
    `  curl -H "Authorization: Bearer sk_test_x" -H "Prefer: example=failed" ${url}/v1/avatars/av_3k9x2m7q4w8e1r5t6y0u2i4o`,
    `  curl -H "Authorization: Bearer sk_test_x" -H "Prefer: code=402" -H "Content-Type: application/json" -d '{"type":"prompt","name":"Maya","prompt":"A skincare creator"}' ${url}/v1/avatars`,
  );
  return lines.join('\n');
}

const CLI_USAGE = 'usage: npm run mock [-- --port N] [--host H]   (or PORT=N, HOST=H; default 127.0.0.1:4010)';

/** An argument or setting the command cannot use: one line with the usage, exit 2. */
class UsageError extends Error {}

/** Where `npm run mock` listens: --port and --host, else PORT and HOST. Anything else is refused, never ignored. */
export function mockAddress(argv: string[], env: NodeJS.ProcessEnv): { port: number; host: string } {
  let values: { port?: string; host?: string };
  try {
    ({ values } = parseArgs({ args: argv, options: { port: { type: 'string' }, host: { type: 'string' } } }));
  } catch (error) {
    throw new UsageError((error as Error).message.replaceAll('\n', ' '));
  }
  const [raw, from] = values.port !== undefined ? [values.port, '--port'] : [env.PORT || '4010', 'PORT'];
  const port = Number(raw);
  if (!/^\d+$/.test(raw) || port < 1 || port > 65535) throw new UsageError(`${from} must be a TCP port number, got "${raw}"`);
  return { port, host: values.host || env.HOST || '127.0.0.1' };
}

if (import.meta.main) {
  answerHelp(`Usage: npm run mock [-- --port N] [--host H]   (or PORT=N, HOST=H; default 127.0.0.1:4010)

Serves a mock of the API from generated/openapi.json (Prism, with a layer of ours in
front for the rule Prism cannot read from the document: an unknown query parameter gets
the operation's 422). It prints the one URL to use as the base URL, then how to ask for
each documented state and error, then a line per request. Ctrl-C stops it.`);
  // Prism runs in its own process group: pass on what the terminal or a supervisor
  // sends us, then leave with Prism's own exit code. The handlers go in first, so a
  // Ctrl-C during start-up stops Prism too instead of leaving it behind.
  let mock: MockServer | undefined;
  let received: NodeJS.Signals | undefined;
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.on(sig, () => {
      received = sig;
      mock?.signal(sig);
    });
  }
  try {
    mock = await startMock({ ...mockAddress(process.argv.slice(2), process.env), logs: 'inherit' });
    if (received) mock.signal(received);
    else console.log(usage(mock.url));
    process.exitCode = await mock.exited;
  } catch (error) {
    const refused = error instanceof UsageError;
    console.error(`mock: ${(error as Error).message}${refused ? `; ${CLI_USAGE}` : ''}`);
    process.exitCode = refused ? 2 : 1;
  }
}
