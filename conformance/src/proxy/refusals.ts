// What the proxy refuses itself, answered as the service answers it: requests the
// service refuses before any route is known (a request with two Host headers, or an
// HTTP/1.1 one without Host; what the HTTP parser cannot read; a CONNECT; an Expect it
// cannot meet). Passed on, the proxy would have turned each into a request the service
// takes (it sets the one Host of the next hop) or answered it with Node's bare 400, so
// a client would see through the proxy what it never sees directly. Each answer is the
// contract's problem document (ND-ERROR-BODY) with the code and status of the service's
// own, and the connection closed after it, as the service closes it.
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { PROBLEM_CODES } from '../../../contract/numbers.ts';

const PROBLEM_CONTENT_TYPE = 'application/problem+json';

/** The end of the connection in the middle of a request: the client left, and nobody reads an answer. */
const CLIENT_LEFT = new Set(['ECONNRESET', 'HPE_INVALID_EOF_STATE']);

const PARSER_ANSWERS: Record<string, { code: string; detail: string }> = {
  HPE_HEADER_OVERFLOW: { code: 'request_header_fields_too_large', detail: 'The request headers are larger than the server accepts.' },
  ERR_HTTP_REQUEST_TIMEOUT: { code: 'request_timeout', detail: 'The request did not arrive in time.' },
};
const MALFORMED = {
  code: 'malformed_request',
  detail: 'The request is not valid HTTP/1.1 (for example a bad Content-Length, both Content-Length and Transfer-Encoding, a Transfer-Encoding other than chunked, or a bad chunk size).',
};

export interface ProxyProblem {
  status: number;
  title: string;
  headers: Record<string, string>;
  body: string;
}

/** The contract's problem document for `code` (its status and title from x-problem-codes), marked as the proxy's. */
export function proxyProblem(code: string, detail: string, instance: string): ProxyProblem {
  const known = PROBLEM_CODES[code];
  if (!known) throw new Error(`the contract has no problem code ${code}`);
  const requestId = `req_${randomBytes(8).toString('hex')}`;
  const body = JSON.stringify({ type: `/problems/${code}`, title: known.title, status: known.status, code, detail, instance, request_id: requestId });
  return {
    status: known.status,
    title: known.title,
    body,
    headers: {
      'Content-Type': PROBLEM_CONTENT_TYPE,
      'Content-Length': String(Buffer.byteLength(body)),
      'X-Request-Id': requestId,
      // Says who answered: the service never saw this request.
      'X-Conformance-Proxy': 'refused',
      Connection: 'close',
    },
  };
}

/**
 * Why the service refuses this request for its Host headers, or undefined: HTTP/1.1
 * requires exactly one (RFC 9112 §3.2), and two may have been read otherwise by whatever
 * stands in front; HTTP/1.0 may leave it out.
 */
export function hostRefusal(req: IncomingMessage): string | undefined {
  let hosts = 0;
  for (let i = 0; i < req.rawHeaders.length; i += 2) if (req.rawHeaders[i]!.toLowerCase() === 'host') hosts++;
  if (hosts > 1) return 'A request must carry one Host header, not several.';
  const http11 = req.httpVersionMajor > 1 || (req.httpVersionMajor === 1 && req.httpVersionMinor >= 1);
  return http11 && hosts === 0 ? 'An HTTP/1.1 request must carry a Host header.' : undefined;
}

/** Answers `res` with the problem and closes the connection once it is written; the request's body is left unread. */
export function refuse(res: ServerResponse, problem: ProxyProblem): void {
  res.writeHead(problem.status, problem.title, problem.headers);
  res.end(problem.body);
}

/** An answer written straight to the connection, where no response object exists. */
function rawAnswer(problem: ProxyProblem, extra: Record<string, string> = {}): string {
  const headers = { ...problem.headers, ...extra };
  return [`HTTP/1.1 ${problem.status} ${problem.title}`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`), '', problem.body].join('\r\n');
}

/**
 * What the proxy's HTTP parser refuses, answered as the service's parser's refusals are
 * (431, 408 or 400 malformed_request as problem documents, a CONNECT 405), rather than
 * with Node's empty answers.
 */
export function answerConnectionErrors(server: Server): void {
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    if (CLIENT_LEFT.has(error.code ?? '') || !socket.writable) {
      socket.destroy();
      return;
    }
    const answer = PARSER_ANSWERS[error.code ?? ''] ?? MALFORMED;
    const current = (socket as Duplex & { _httpMessage?: ServerResponse })._httpMessage;
    socket.on('error', () => socket.destroy());
    if (!current) {
      socket.end(rawAnswer(proxyProblem(answer.code, answer.detail, '')));
    } else if (current.req.complete) {
      // What follows a whole request is refused once that request is answered, never on
      // its own response, which may already have been acted on (as the service does).
      const after = () => (socket.writable ? socket.end(rawAnswer(proxyProblem(answer.code, answer.detail, ''))) : socket.destroy());
      if (current.writableFinished) after();
      else current.once('finish', after).once('close', () => current.writableFinished || socket.destroy());
    } else if (!current.headersSent) {
      // Its body is not HTTP (a bad chunk size): answered on its own response; the
      // forwarding of it sees the response taken and stops.
      const problem = proxyProblem(answer.code, answer.detail, (current.req.url ?? '').split('?')[0]!);
      current.writeHead(problem.status, problem.title, problem.headers).end(problem.body, () => socket.destroy());
    } else {
      socket.destroy(); // a client that broke off its own request
    }
  });
  server.on('connect', (req: IncomingMessage, socket: Duplex) => {
    socket.on('error', () => socket.destroy());
    socket.end(rawAnswer(proxyProblem('method_not_allowed', 'CONNECT is not allowed: this service is not a proxy.', req.url ?? ''), { Allow: '' }));
  });
  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
    refuse(res, proxyProblem('expectation_failed', `Only "Expect: 100-continue" is understood; got "${req.headers.expect}".`, (req.url ?? '').split('?')[0]!));
  });
}
