import { defineCheck, STATEFUL } from '../../check.ts';
import type { ClauseId, DecisionId } from '../../clauses.ts';
import { describe, expectProblem, isSuccess } from '../../expect.ts';
import type { Exchange } from '../../http.ts';
import { fail } from '../../outcome.ts';

export default defineCheck({
  id: 'auth.other-account-hidden',
  title: "Another account's key can neither read nor use this account's avatars and videos",
  asserts: 'A key of another account can neither read this account\'s avatar and video (403 or 404, never the record) nor make a video from its avatar.',
  clauses: ['AUTH-ACCOUNT'],
  decisions: ['ND-ERRORS'],
  profiles: STATEFUL,
  needs: ['second-key'],
  // A video from another account's avatar, charged to the second account if wrongly accepted.
  creates: () => ({ avatar_video: 1 }),
  async run(ctx) {
    const avatar = await ctx.world.readyAvatar();
    const video = await ctx.world.video();

    const judge = (exchange: Exchange, what: string, clause: ClauseId | DecisionId = 'AUTH-ACCOUNT') => {
      if (isSuccess(exchange)) {
        fail({
          clause: 'AUTH-ACCOUNT',
          message: `${what} succeeded`,
          expected: ctx.contract ? '404 not_found, as for an ID that does not exist' : '403 or 404',
          received: describe(exchange),
          fix: "Look records up within the key's own account only.",
          exchanges: [exchange],
        });
      }
      if (ctx.contract) expectProblem(exchange, 404, 'not_found', clause === 'AUTH-ACCOUNT' ? 'ND-ERRORS' : clause, what);
      else if (exchange.status !== 403 && exchange.status !== 404) {
        fail({ clause: 'AUTH-ACCOUNT', message: `${what} answered ${exchange.status}`, expected: '403 or 404', received: describe(exchange), fix: "Answer records of other accounts as not found.", exchanges: [exchange] });
      }
    };

    judge(await ctx.http.send({ key: 'second', method: 'GET', path: `/v1/avatars/${avatar.id}`, note: "another account's avatar" }), "reading another account's avatar");
    judge(await ctx.http.send({ key: 'second', method: 'GET', path: `/v1/avatar-videos/${video.id}`, note: "another account's video" }), "reading another account's video");
    const use = await ctx.http.send({
      key: 'second',
      method: 'POST',
      path: '/v1/avatar-videos',
      json: ctx.shape.videoBody(avatar.id!, 'A video from an avatar of another account.'),
      note: "a video from another account's avatar",
    });
    if (isSuccess(use)) ctx.world.trackUnexpected('unexpected-video-from-other-account', 'avatar_video', 'second', use);
    judge(use, "making a video from another account's avatar");
  },
});
