// What Node's HTTP parser refuses before Koa sees a request (a bad Content-Length, both
// Content-Length and Transfer-Encoding, headers over the size limit, a timeout) and an
// Expect header it cannot meet: answered as problem+json like everything else, rather
// than with Node's empty bodies. The connection is closed after the answer.
import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { PROBLEM_CONTENT_TYPE, PROBLEMS, problemBody } from './problem.ts';

const ANSWERS: Record<string, { code: string; detail: string }> = {
  HPE_HEADER_OVERFLOW: { code: 'request_header_fields_too_large', detail: 'The request headers are larger than the server accepts.' },
  ERR_HTTP_REQUEST_TIMEOUT: { code: 'request_timeout', detail: 'The request did not arrive in time.' },
};
const MALFORMED = { code: 'malformed_request', detail: 'The request is not valid HTTP/1.1 (for example a bad Content-Length, or both Content-Length and Transfer-Encoding).' };

/** The problem document for `code`, with its status and title from the one table of codes. */
function problem(code: string, detail: string, instance: string) {
  const requestId = `req_${randomBytes(8).toString('hex')}`;
  const { status, title } = PROBLEMS[code]!;
  return { status, title, requestId, body: JSON.stringify(problemBody({ code, detail, instance, requestId })) };
}

export function answerConnectionErrors(server: Server, log: Logger): void {
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    // A reset or a half-written answer leaves nobody to answer.
    if (error.code === 'ECONNRESET' || !socket.writable || (socket as Duplex & { _httpMessage?: unknown })._httpMessage) {
      socket.destroy();
      return;
    }
    const answer = ANSWERS[error.code ?? ''] ?? MALFORMED;
    const { status, title, requestId, body } = problem(answer.code, answer.detail, '');
    log.info({ code: error.code }, 'refused a request the HTTP parser could not read');
    socket.end(
      [
        `HTTP/1.1 ${status} ${title}`,
        `Content-Type: ${PROBLEM_CONTENT_TYPE}`,
        `Content-Length: ${Buffer.byteLength(body)}`,
        `X-Request-Id: ${requestId}`,
        'Connection: close',
        '',
        body,
      ].join('\r\n'),
    );
  });
  server.on('checkExpectation', (req, res) => {
    const { status, title, requestId, body } = problem('expectation_failed', `Only "Expect: 100-continue" is understood; got "${req.headers.expect}".`, req.url ?? '');
    res.writeHead(status, title, { 'Content-Type': PROBLEM_CONTENT_TYPE, 'Content-Length': Buffer.byteLength(body), 'X-Request-Id': requestId, Connection: 'close' });
    res.end(body);
  });
}
