// What Node's HTTP parser refuses before Koa sees a request (a bad Content-Length, both
// Content-Length and Transfer-Encoding, headers over the size limit, a timeout) and an
// Expect header it cannot meet: answered as problem+json like everything else, rather
// than with Node's empty bodies. The connection is closed after the answer.
import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { PROBLEM_CONTENT_TYPE, problemBody } from './problem.ts';

const ANSWERS: Record<string, { code: string; detail: string }> = {
  HPE_HEADER_OVERFLOW: { code: 'request_header_fields_too_large', detail: 'The request headers are larger than the server accepts.' },
  ERR_HTTP_REQUEST_TIMEOUT: { code: 'request_timeout', detail: 'The request did not arrive in time.' },
};
const MALFORMED = { code: 'malformed_request', detail: 'The request is not valid HTTP/1.1 (for example a bad Content-Length, or both Content-Length and Transfer-Encoding).' };

function problemResponse(code: string, detail: string, status: number, reason: string): string {
  const requestId = `req_${randomBytes(8).toString('hex')}`;
  const body = JSON.stringify(problemBody({ code, detail, instance: '', requestId }));
  return [
    `HTTP/1.1 ${status} ${reason}`,
    `Content-Type: ${PROBLEM_CONTENT_TYPE}`,
    `Content-Length: ${Buffer.byteLength(body)}`,
    `X-Request-Id: ${requestId}`,
    'Connection: close',
    '',
    body,
  ].join('\r\n');
}

export function answerConnectionErrors(server: Server, log: Logger, statusOf: (code: string) => { status: number; title: string }): void {
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    // A reset or a half-written answer leaves nobody to answer.
    if (error.code === 'ECONNRESET' || !socket.writable || (socket as Duplex & { _httpMessage?: unknown })._httpMessage) {
      socket.destroy();
      return;
    }
    const answer = ANSWERS[error.code ?? ''] ?? MALFORMED;
    const { status, title } = statusOf(answer.code);
    log.info({ code: error.code }, 'refused a request the HTTP parser could not read');
    socket.end(problemResponse(answer.code, answer.detail, status, title));
  });
  server.on('checkExpectation', (req, res) => {
    const { status, title } = statusOf('expectation_failed');
    const body = JSON.stringify(problemBody({ code: 'expectation_failed', detail: `Only "Expect: 100-continue" is understood; got "${req.headers.expect}".`, instance: req.url ?? '', requestId: `req_${randomBytes(8).toString('hex')}` }));
    res.writeHead(status, title, { 'Content-Type': PROBLEM_CONTENT_TYPE, 'Content-Length': Buffer.byteLength(body), Connection: 'close' });
    res.end(body);
  });
}
