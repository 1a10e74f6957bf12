// Slow and idle clients are cut at the documented limits, each with a problem where an
// answer can still be given, and the server holds a bounded number of connections.
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { promptAvatar, startTestService, type TestService } from '../support/harness.ts';

const LIMITS = { HTTP_HEADERS_TIMEOUT_MS: '400', HTTP_REQUEST_TIMEOUT_MS: '900', HTTP_KEEP_ALIVE_TIMEOUT_MS: '200', HTTP_MAX_CONNECTIONS: '8' };

let svc: TestService;
let key: string;
beforeAll(async () => {
  svc = await startTestService({ env: LIMITS });
  key = (await svc.account()).api_key;
});
afterAll(() => svc.dispose());

interface Ending {
  /** From the connection to its close, milliseconds. */
  after: number;
  text: string;
  /** The server reset the connection instead of closing it. */
  reset: boolean;
}

/** Opens a connection, writes `first`, and resolves with what the server wrote until it closed. */
function converse(first: string, socket = open()): Promise<Ending> {
  const started = Date.now();
  return new Promise((resolve) => {
    let text = '';
    let reset = false;
    const go = () => socket.write(first);
    if (socket.connecting) socket.once('connect', go);
    else go();
    socket.on('data', (chunk) => (text += chunk.toString()));
    socket.on('error', () => (reset = true));
    socket.on('close', () => resolve({ after: Date.now() - started, text, reset }));
  });
}

function open(): Socket {
  const { port } = new URL(svc.url);
  return connect(Number(port), '127.0.0.1');
}

const statusOf = (text: string) => Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1]);
const problemOf = (text: string) => JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4));

describe('slow clients', () => {
  it('answers headers that do not arrive within HTTP_HEADERS_TIMEOUT_MS with a 408 problem, and closes', async () => {
    const ending = await converse('GET /v1/me HTTP/1.1\r\nHost: t\r\n');

    expect(statusOf(ending.text)).toBe(408);
    expect(problemOf(ending.text)).toMatchObject({ code: 'request_timeout', status: 408 });
    expect(ending.after).toBeGreaterThanOrEqual(400);
    expect(ending.after).toBeLessThan(5000);
  });

  it('answers a body that does not arrive within HTTP_REQUEST_TIMEOUT_MS with a 408 problem under the request ID, and creates nothing', async () => {
    const body = JSON.stringify(promptAvatar());
    const activeBefore = await svc.activeJobs();

    const ending = await converse(
      `POST /v1/avatars HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 10)}`,
    );

    expect(statusOf(ending.text)).toBe(408);
    expect(ending.text).toMatch(/content-type: application\/problem\+json/i);
    const problem = problemOf(ending.text);
    expect(problem).toMatchObject({ code: 'request_timeout', status: 408 });
    expect(ending.text).toContain(`X-Request-Id: ${problem.request_id}`);
    expect(ending.after).toBeGreaterThanOrEqual(900);
    expect(ending.after).toBeLessThan(5000);
    expect(await svc.activeJobs()).toBe(activeBefore);
  });

  it('closes a kept-alive connection left idle after HTTP_KEEP_ALIVE_TIMEOUT_MS (plus Node’s one-second grace)', async () => {
    const ending = await converse('GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n');

    expect(statusOf(ending.text)).toBe(200);
    expect(ending.after).toBeGreaterThanOrEqual(200);
    expect(ending.after).toBeLessThan(5000);
  });
});

describe('a second request that does not arrive in time behind a whole one', () => {
  it('leaves the first one its own answer, then answers the rest 408 and closes', async () => {
    const ending = await converse(`GET /v1/me HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer ${key}\r\n\r\nGET /v1/me HTTP/1.1\r\nHost: t\r\n`);

    const answers = ending.text.split(/(?=HTTP\/1\.1 \d{3} )/);
    expect(answers.map(statusOf)).toEqual([200, 408]);
    expect(problemOf(answers[1]!)).toMatchObject({ code: 'request_timeout' });
  });
});

describe('the bound on connections', () => {
  it('closes connections beyond HTTP_MAX_CONNECTIONS at once, and serves again when one ends', async () => {
    const held = Array.from({ length: 8 }, () => open());
    await Promise.all(held.map((s) => new Promise((r) => s.once('connect', r))));

    const beyond = await converse('GET /healthz HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n');
    held[0]!.destroy();
    await new Promise((r) => held[0]!.once('close', r));
    const after = await retryUntilServed();
    for (const s of held) s.destroy();

    expect(beyond.text).toBe(''); // closed unread: a connection held until a timeout would get a 408
    expect(statusOf(after.text)).toBe(200);
  });
});

/** The server learns of a closed connection a moment after the client: ask until it has. */
async function retryUntilServed(): Promise<Ending> {
  for (let i = 0; ; i++) {
    const ending = await converse('GET /healthz HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n');
    if (ending.text || i > 50) return ending;
  }
}
