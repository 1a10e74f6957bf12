// What Node's HTTP parser refuses before Koa sees a request (a bad Content-Length, both
// Content-Length and Transfer-Encoding, headers over the size limit, a timeout), what it
// refuses while a request's body arrives (a Transfer-Encoding other than chunked, a bad
// chunk size), a CONNECT, an HTTP/1.1 request without Host and an Expect header it
// cannot meet: answered as problem+json with a request ID like everything else, rather
// than with Node's empty bodies or a closed connection. The connection is closed after
// the answer.
import { randomBytes } from 'node:crypto';
import type { Server, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { HttpProblem, PROBLEM_CONTENT_TYPE, PROBLEMS, problemBody } from './problem.ts';
import type { AppContext } from './state.ts';

const ANSWERS: Record<string, { code: string; detail: string }> = {
  HPE_HEADER_OVERFLOW: { code: 'request_header_fields_too_large', detail: 'The request headers are larger than the server accepts.' },
  ERR_HTTP_REQUEST_TIMEOUT: { code: 'request_timeout', detail: 'The request did not arrive in time.' },
};
const MALFORMED = {
  code: 'malformed_request',
  detail: 'The request is not valid HTTP/1.1 (for example a bad Content-Length, both Content-Length and Transfer-Encoding, a Transfer-Encoding other than chunked, or a bad chunk size).',
};

/** The end of the connection in the middle of a request: the client left, and nobody reads an answer. */
const CLIENT_LEFT = new Set(['ECONNRESET', 'HPE_INVALID_EOF_STATE']);

/** The problem document for `code`, with its status and title from the one table of codes. */
function problem(code: string, detail: string, instance: string, requestId = `req_${randomBytes(8).toString('hex')}`) {
  const { status, title } = PROBLEMS[code]!;
  const body = JSON.stringify(problemBody({ code, detail, instance, requestId }));
  const headers = { 'Content-Type': PROBLEM_CONTENT_TYPE, 'Content-Length': Buffer.byteLength(body), 'X-Request-Id': requestId, Connection: 'close' };
  return { status, title, requestId, body, headers };
}

/** An answer written straight to the connection, where no response object exists. */
function rawAnswer(status: number, title: string, headers: Record<string, string | number>, body: string): string {
  return [`HTTP/1.1 ${status} ${title}`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`), '', body].join('\r\n');
}

export function answerConnectionErrors(server: Server, log: Logger): void {
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    // A reset leaves nobody to answer.
    if (CLIENT_LEFT.has(error.code ?? '') || !socket.writable) {
      socket.destroy();
      return;
    }
    const answer = ANSWERS[error.code ?? ''] ?? MALFORMED;
    const timedOut = error.code === 'ERR_HTTP_REQUEST_TIMEOUT';
    // The request the app is answering on this connection, if any.
    const current = (socket as Duplex & { _httpMessage?: ServerResponse })._httpMessage;
    const refuse = (requestId?: string, instance = '') => {
      const { status, title, body, headers } = problem(answer.code, answer.detail, instance, requestId);
      log.info({ code: error.code, requestId: headers['X-Request-Id'] }, timedOut ? 'a request did not arrive in time; answered 408 and closed the connection' : 'refused a request the HTTP parser could not read');
      return { status, title, body, headers };
    };

    if (!current) {
      const { status, title, body, headers } = refuse();
      socket.end(rawAnswer(status, title, headers, body));
    } else if (current.req.complete) {
      // What follows a whole request (bytes that are not one, or the start of a second
      // that did not arrive in time) is refused once the request that was is answered:
      // never on that request's own response, which may already have been acted on.
      const after = () => {
        if (!socket.writable) return socket.destroy();
        const { status, title, body, headers } = refuse();
        socket.end(rawAnswer(status, title, headers, body));
      };
      if (current.writableFinished) after();
      else current.once('finish', after).once('close', () => current.writableFinished || socket.destroy());
    } else if (!current.headersSent) {
      // Its body did not arrive in time, or is not HTTP (a Transfer-Encoding the parser
      // refuses once the headers are read, a bad chunk size): answered on its own
      // response, under the app's request ID; the app's read of the body then fails and
      // it answers nothing more.
      const id = current.getHeader('X-Request-Id');
      const { status, title, body, headers } = refuse(typeof id === 'string' ? id : undefined, (current.req.url ?? '').split('?')[0]);
      current.writeHead(status, title, headers).end(body, () => socket.destroy());
    } else {
      socket.destroy(); // a client that broke off its own request: the app sees it leave
    }
  });
  // Without a listener Node closes a CONNECT's connection unanswered. This is an origin
  // server, not a proxy: no resource here takes CONNECT, hence the empty Allow.
  server.on('connect', (req: { url?: string }, socket: Duplex) => {
    const { status, title, body, headers } = problem('method_not_allowed', 'CONNECT is not allowed: this service is not a proxy.', req.url ?? '');
    log.info({ requestId: headers['X-Request-Id'] }, 'refused a CONNECT');
    socket.on('error', () => socket.destroy());
    socket.end(rawAnswer(status, title, { ...headers, Allow: '' }, body));
  });
  server.on('checkExpectation', (req, res) => {
    const { status, title, body, headers } = problem('expectation_failed', `Only "Expect: 100-continue" is understood; got "${req.headers.expect}".`, req.url ?? '');
    res.writeHead(status, title, headers).end(body);
  });
}

/**
 * Headers a request must carry once, read in one pass over its raw headers:
 * - HTTP/1.1 requires one Host (RFC 9112 §3.2): a request without one, or with two (which
 *   a proxy in front may have read otherwise than Node, which keeps the first), is refused
 *   with a problem under its request ID and the connection closed. The server is created
 *   with `requireHostHeader: false` so that Node does not answer the first case with a
 *   bare 400.
 * - More than one Authorization is malformed: which key would be meant is unknowable, and
 *   taking the first (what Node does) would act on a guess.
 * Both are refused before any route is known, like the other requests the HTTP layer
 * cannot read. A plain check that throws the problem, called by the app's first layer
 * below the error handler: a middleware of its own cost every request a layer of the
 * chain (a bound dispatch and a promise) for a refusal that is rare.
 */
export function refuseAmbiguousHeaders(ctx: AppContext): void {
  const { httpVersionMajor: major, httpVersionMinor: minor, rawHeaders } = ctx.req;
  let hosts = 0;
  let authorizations = 0;
  // Only names of the right length are lowered: the pass allocates nothing on a request's other headers.
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!;
    if (name.length === 4 && name.toLowerCase() === 'host') hosts++;
    else if (name.length === 13 && name.toLowerCase() === 'authorization') authorizations++;
  }
  const http11 = major > 1 || (major === 1 && minor >= 1);
  if (hosts > 1 || (http11 && hosts === 0)) {
    ctx.set('Connection', 'close');
    throw new HttpProblem('malformed_request', hosts > 1 ? 'A request must carry one Host header, not several.' : 'An HTTP/1.1 request must carry a Host header.');
  }
  if (authorizations > 1) throw new HttpProblem('malformed_request', `The request carries ${authorizations} Authorization headers; send exactly one.`);
}
