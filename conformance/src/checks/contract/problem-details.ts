import { CONTRACT_ONLY, defineCheck } from '../../check.ts';
import { mediaType, problemCode } from '../../expect.ts';
import { isJson } from '../../world.ts';
import { fail } from '../../outcome.ts';

export default defineCheck({
  id: 'contract.problem-details',
  title: 'Every error is application/problem+json with code, status and request_id',
  asserts: 'Contract only: every error is an application/problem+json document with code, status equal to the HTTP status, and request_id.',
  clauses: [],
  decisions: ['ND-ERROR-BODY'],
  profiles: CONTRACT_ONLY,
  phase: 'passive',
  async run(ctx) {
    // Only the API's own paths: an unversioned path may be answered by anything.
    const errors = ctx.http.log.filter((e) => e.status >= 400 && ctx.validator.match(e.method, e.path));
    for (const exchange of errors) {
      const body = isJson(exchange.json) ? exchange.json : undefined;
      const requestId = exchange.responseHeaders['x-request-id'];
      const problems = [
        mediaType(exchange) !== 'application/problem+json' && `Content-Type ${mediaType(exchange) || '(none)'}`,
        !problemCode(exchange) && 'no code',
        body?.status !== exchange.status && `status ${JSON.stringify(body?.status)} in the body`,
        typeof body?.request_id !== 'string' && 'no request_id',
        requestId !== undefined && body?.request_id !== requestId && 'request_id differs from X-Request-Id',
      ].filter(Boolean);
      if (problems.length > 0) {
        fail({ clause: 'ND-ERROR-BODY', message: `a ${exchange.status} answer is not a complete problem document: ${problems.join(', ')}`, expected: 'application/problem+json with code, status (= HTTP status) and request_id (= X-Request-Id)', received: exchange.bodyText.slice(0, 200), fix: 'Answer every error as an RFC 9457 problem document (ND-ERROR-BODY).', exchanges: [exchange] });
      }
    }
  },
});
