import { CONTRACT_ONLY, defineCheck } from '../../check.ts';
import { isJson } from '../../world.ts';
import { fail } from '../../outcome.ts';
import { CREDIT_COSTS as COST } from '../../../../contract/numbers.ts';

export default defineCheck({
  id: 'credits.cost',
  title: `An avatar costs ${COST.avatar} credits and a video ${COST.avatar_video}`,
  asserts: `Contract only: an avatar costs ${COST.avatar} credits and a video ${COST.avatar_video}, as the records and the 402 state.`,
  clauses: [],
  decisions: ['ND-CREDIT-COST'],
  profiles: CONTRACT_ONLY,
  async run(ctx) {
    const jobs = await ctx.world.allSettled();
    for (const job of jobs.filter((j) => j.createdRecord)) {
      const credits = ctx.shape.creditsOf(job.terminal ?? job.createdRecord);
      if (credits !== COST[job.kind]) {
        fail({ clause: 'ND-CREDIT-COST', message: `${job.label} ${job.id} costs ${String(credits)} credits`, expected: String(COST[job.kind]), received: String(credits), fix: `Charge ${COST.avatar} credits per avatar and ${COST.avatar_video} per video, and state it in credits.`, exchanges: [job.create] });
      }
    }
    if (ctx.hasKey('empty')) {
      const refused = await ctx.world.insufficientAttempt();
      const required = isJson(refused.json) ? refused.json.credits_required : undefined;
      if (refused.status === 402 && required !== COST.avatar) {
        fail({ clause: 'ND-CREDIT-COST', message: 'the 402 for an avatar names another price', expected: `credits_required ${COST.avatar}`, received: String(required), exchanges: [refused] });
      }
    }
  },
});
