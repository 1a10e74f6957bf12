import { defineCheck, STATEFUL } from '../../check.ts';
import { describe, expectProblem, isSuccess } from '../../expect.ts';
import type { Exchange } from '../../http.ts';
import { fail, skip } from '../../outcome.ts';

export default defineCheck({
  id: 'videos.require-ready-avatar',
  title: 'A video is refused while its avatar is not ready (queued, processing or failed)',
  asserts: 'A video requested from an avatar that GET still shows pending, or from a failed avatar, is refused with a client error (not 401, 402 or 429) and starts no job.',
  clauses: ['AV-READY-BEFORE-VIDEO'],
  decisions: ['ND-ERRORS'],
  profiles: STATEFUL,
  async run(ctx) {
    await ctx.world.kickoff();
    const attempts: { exchange: Exchange; what: string }[] = [];
    const early = ctx.world.notReadyAttempt;
    // Conclusive only if the avatar was still pending after the attempt was answered.
    if (early && ctx.shape.isPending(early.statusAfter)) {
      attempts.push({ exchange: early.exchange, what: `a video from an avatar still ${early.statusAfter}` });
    }
    if (ctx.shape.canFail()) {
      try {
        attempts.push({ exchange: await ctx.world.videoFromFailedAvatar(), what: 'a video from a failed avatar' });
      } catch (error) {
        ctx.note(`no failed avatar to try: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
    if (attempts.length === 0) skip('no video was requested while its avatar was not ready: the avatar was ready before the request could be made, and no failed avatar exists');
    for (const { exchange, what } of attempts) {
      if (isSuccess(exchange)) {
        fail({
          clause: 'AV-READY-BEFORE-VIDEO',
          message: `${what} was accepted`,
          expected: ctx.contract ? '409 avatar_not_ready' : 'a 4xx refusal',
          received: describe(exchange),
          fix: 'Refuse POST /v1/avatar-videos unless the avatar is ready.',
          exchanges: [exchange],
        });
      }
      if (ctx.contract) expectProblem(exchange, 409, 'avatar_not_ready', 'ND-ERRORS', what);
      else if (exchange.status < 400 || exchange.status >= 500 || [401, 402, 429].includes(exchange.status)) {
        fail({ clause: 'AV-READY-BEFORE-VIDEO', message: `${what} answered ${exchange.status}`, expected: 'a 4xx saying the avatar is not ready', received: describe(exchange), fix: 'Refuse it with a client error that names the avatar state.', exchanges: [exchange] });
      }
    }
  },
});
