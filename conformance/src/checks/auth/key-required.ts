import { ALL, defineCheck } from '../../check.ts';
import { describe, expectProblem, validPromptAvatar } from '../../expect.ts';
import type { SendRequest } from '../../http.ts';
import { fail } from '../../outcome.ts';

/** A key no deployment issued; its prefix looks like a sandbox key. */
const MADE_UP_KEY = 'sk_test_conformanceRunnerUnknownKey0000';
const SOME_AVATAR = '/v1/avatars/av_3k9x2m7q4w8e1r5t6y0u2i4o';

export default defineCheck({
  id: 'auth.key-required',
  title: 'Requests without a valid API key are refused',
  asserts: 'A request without a key, or with a key nobody issued, is refused with 401 or 403 on every endpoint (the contract: 401 unauthorized with WWW-Authenticate: Bearer); nothing is read, created or counted for it.',
  clauses: ['AUTH-KEY'],
  decisions: ['ND-AUTH-PRESENTATION', 'ND-ERROR-BODY'],
  profiles: ALL,
  lane: 'requests',
  async run(ctx) {
    const cases: { what: string; request: SendRequest }[] = [
      { what: 'GET /v1/me without a key', request: { key: null, method: 'GET', path: '/v1/me' } },
      { what: 'POST /v1/avatars without a key', request: { key: null, method: 'POST', path: '/v1/avatars', json: validPromptAvatar() } },
      { what: 'GET /v1/avatars/{id} without a key', request: { key: null, method: 'GET', path: SOME_AVATAR } },
      { what: 'GET /v1/avatar-videos/{id} without a key', request: { key: null, method: 'GET', path: '/v1/avatar-videos/vid_8f2k4m6n1p3q5r7s9t0v2w4x' } },
    ];
    // A stateless mock checks that a key is present, not that it exists.
    if (ctx.profile !== 'mock') {
      cases.push(
        { what: 'GET /v1/me with a key nobody issued', request: { key: { token: MADE_UP_KEY }, method: 'GET', path: '/v1/me' } },
        { what: 'POST /v1/avatars with a key nobody issued', request: { key: { token: MADE_UP_KEY }, method: 'POST', path: '/v1/avatars', json: validPromptAvatar() } },
      );
    }
    for (const { what, request } of cases) {
      const exchange = await ctx.http.send({ ...request, note: what });
      if (ctx.contract || ctx.profile === 'mock') {
        expectProblem(exchange, 401, 'unauthorized', 'AUTH-KEY', what);
        const challenge = exchange.responseHeaders['www-authenticate'] ?? '';
        if (!/^bearer\b/i.test(challenge)) {
          fail({
            clause: 'ND-AUTH-PRESENTATION',
            message: `${what}: the 401 does not say which scheme to use`,
            expected: 'WWW-Authenticate: Bearer …',
            received: challenge ? `WWW-Authenticate: ${challenge}` : 'no WWW-Authenticate header',
            fix: 'Send WWW-Authenticate: Bearer realm="…" with every 401.',
            exchanges: [exchange],
          });
        }
      } else if (exchange.status !== 401 && exchange.status !== 403) {
        fail({
          clause: 'AUTH-KEY',
          message: `${what} was not refused`,
          expected: '401 (or 403)',
          received: describe(exchange),
          fix: 'Authenticate every /v1 request before doing anything else with it.',
          exchanges: [exchange],
        });
      }
    }
  },
});
