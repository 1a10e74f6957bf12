// What the HTTP parser refuses, a bad Expect, and a client that goes away: each answered
// as problem+json (or, for the client that left, not counted as our failure).
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { promptAvatar, startTestService, type TestService } from '../support/harness.ts';

let svc: TestService;
let key: string;
beforeAll(async () => {
  svc = await startTestService();
  key = (await svc.account()).api_key;
});
afterAll(() => svc.dispose());

/** Sends raw bytes and resolves with everything the server wrote until it closed the connection. */
function raw(request: string): Promise<{ status: number; type: string; body: any; head: string }> {
  const { port } = new URL(svc.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1', () => socket.write(request));
    let text = '';
    socket.on('data', (chunk) => (text += chunk.toString()));
    socket.on('error', reject);
    socket.on('close', () => {
      const [head, ...rest] = text.split('\r\n\r\n');
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head ?? '')?.[1]);
      const type = /content-type: ([^\r\n]+)/i.exec(head ?? '')?.[1] ?? '';
      resolve({ status, type, body: JSON.parse(rest.join('\r\n\r\n') || 'null'), head: head ?? '' });
    });
  });
}

describe('requests the HTTP parser refuses', () => {
  it.each([
    ['a Content-Length that is not a number', 'POST /v1/avatars HTTP/1.1\r\nHost: t\r\nContent-Length: abc\r\n\r\n', 400, 'malformed_request'],
    ['both Content-Length and Transfer-Encoding', 'POST /v1/avatars HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n', 400, 'malformed_request'],
    ['headers over the size limit', `GET /v1/me HTTP/1.1\r\nHost: t\r\nX-Padding: ${'a'.repeat(20_000)}\r\n\r\n`, 431, 'request_header_fields_too_large'],
  ])('answers %s with problem+json and a code', async (_case, request, status, code) => {
    const reply = await raw(request);

    expect(reply.status).toBe(status);
    expect(reply.type).toMatch(/^application\/problem\+json/);
    expect(reply.body).toMatchObject({ code, status });
  });

  it.each([
    ['an HTTP/1.1 request without Host', 'GET /v1/me HTTP/1.1\r\n\r\n', 400, 'malformed_request'],
    ['a request with two Host headers', 'GET /v1/me HTTP/1.1\r\nHost: a.example\r\nHost: b.example\r\n\r\n', 400, 'malformed_request'],
    ['a CONNECT', 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n', 405, 'method_not_allowed'],
    ['a Transfer-Encoding other than chunked', 'POST /v1/avatars HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: xchunked\r\n\r\nabc', 400, 'malformed_request'],
    ['a bad chunk size', 'POST /v1/avatars HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n', 400, 'malformed_request'],
  ])('answers %s with a problem under the request ID it names in X-Request-Id, then closes', async (_case, request, status, code) => {
    const reply = await raw(request);

    expect(reply.status).toBe(status);
    expect(reply.type).toMatch(/^application\/problem\+json/);
    expect(reply.body).toMatchObject({ code, status, request_id: expect.stringMatching(/^req_/) });
    expect(reply.head).toMatch(new RegExp(`x-request-id: ${reply.body.request_id}\r`, 'i'));
    if (status === 405) expect(reply.head).toMatch(/\r\nallow: ?(\r\n|$)/i);
  });

  it('answers OPTIONS as a method the path does not take: 405 with the Allow of the path (ND-OPTIONS)', async () => {
    const reply = await raw('OPTIONS /v1/avatars HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n');

    expect(reply.status).toBe(405);
    expect(reply.body).toMatchObject({ code: 'method_not_allowed', request_id: expect.stringMatching(/^req_/) });
    expect(reply.head).toMatch(/\r\nallow: POST, HEAD, GET\r\n/i);
  });

  it.each([['/healthz'], ['/metrics']])('refuses a method other than GET on %s with 405 and its Allow', async (path) => {
    const reply = await raw(`POST ${path} HTTP/1.1\r\nHost: t\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`);

    expect(reply).toMatchObject({ status: 405, body: { code: 'method_not_allowed', request_id: expect.stringMatching(/^req_/) } });
    expect(reply.head).toMatch(/\r\nallow: GET, HEAD\r\n/i);
  });

  it('answers an HTTP/1.0 request without Host as any other (Host is HTTP/1.1\'s rule)', async () => {
    const reply = await raw('GET /v1/me HTTP/1.0\r\n\r\n');

    expect(reply).toMatchObject({ status: 401, body: { code: 'unauthorized' } });
  });

  it('answers a whole request followed by bytes that are not one (a body sent without a length), then refuses the rest with a problem and closes', async () => {
    const { port } = new URL(svc.url);
    const text = await new Promise<string>((resolve) => {
      const socket = connect(Number(port), '127.0.0.1', () => socket.write(`GET /v1/me HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer ${key}\r\n\r\n\u0000not a request\r\n\r\n`));
      let all = '';
      socket.on('data', (chunk) => (all += chunk.toString()));
      socket.on('close', () => resolve(all));
    });

    const answers = text.split(/(?=HTTP\/1\.1 \d{3} )/);
    expect(answers.map((a) => Number(a.slice(9, 12)))).toEqual([200, 400]);
    expect(answers[1]).toMatch(/content-type: application\/problem\+json/i);
    expect(JSON.parse(answers[1]!.slice(answers[1]!.indexOf('\r\n\r\n') + 4)).code).toBe('malformed_request');
  });

  it('answers an Expect it cannot meet with problem+json 417', async () => {
    const reply = await raw(`GET /v1/me HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer ${key}\r\nExpect: 200-maybe\r\nConnection: close\r\n\r\n`);

    expect(reply.status).toBe(417);
    expect(reply.type).toMatch(/^application\/problem\+json/);
    expect(reply.body.code).toBe('expectation_failed');
  });
});

describe('two Authorization headers', () => {
  it('are refused with a 400 problem naming the header, whichever key comes first', async () => {
    const other = (await svc.account()).api_key;

    const reply = await raw(`GET /v1/me HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer ${key}\r\nauthorization: Bearer ${other}\r\nConnection: close\r\n\r\n`);

    expect(reply.status).toBe(400);
    expect(reply.type).toMatch(/^application\/problem\+json/);
    expect(reply.body).toMatchObject({ code: 'malformed_request', detail: 'The request carries 2 Authorization headers; send exactly one.' });
    expect(JSON.stringify(reply.body)).not.toContain(key);
  });

  it('leave one Authorization header as it was: the key is read', async () => {
    const reply = await raw(`GET /v1/me HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer ${key}\r\nConnection: close\r\n\r\n`);

    expect(reply.status).toBe(200);
  });
});

describe('a client that leaves mid-upload', () => {
  it('is not counted as a server error', async () => {
    const body = JSON.stringify(promptAvatar());
    const { port } = new URL(svc.url);
    await new Promise<void>((resolve) => {
      const socket = connect(Number(port), '127.0.0.1', () => {
        socket.write(`POST /v1/avatars HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${body.length + 100}\r\n\r\n${body.slice(0, 20)}`);
        // Long enough for the server to start reading the body, then gone.
        setTimeout(() => socket.destroy(), 100);
      });
      socket.on('close', () => resolve());
    });
    let metrics = '';
    for (let i = 0; i < 50 && !/route="\/v1\/avatars",status="499"/.test(metrics); i++) {
      metrics = await (await fetch(`${svc.url}/metrics`)).text();
      if (!/status="499"/.test(metrics)) await new Promise((r) => setTimeout(r, 20));
    }

    expect(metrics).toMatch(/http_requests_total\{method="POST",route="\/v1\/avatars",status="499"\} 1/);
    expect(metrics).not.toMatch(/status="5\d\d"/);
  });
});
