import { CONTRACT_ONLY, defineCheck } from '../../check.ts';
import { isJson } from '../../world.ts';
import { fail } from '../../outcome.ts';

const COST = { avatar: 10, avatar_video: 20 } as const;

export default defineCheck({
  id: 'credits.cost',
  title: 'An avatar costs 10 credits and a video 20',
  asserts: 'Contract only: an avatar costs 10 credits and a video 20, as the records and the 402 state.',
  clauses: [],
  decisions: ['ND-CREDIT-COST'],
  profiles: CONTRACT_ONLY,
  async run(ctx) {
    const jobs = await ctx.world.allSettled();
    for (const job of jobs.filter((j) => j.createdRecord)) {
      const credits = ctx.shape.creditsOf(job.terminal ?? job.createdRecord);
      if (credits !== COST[job.kind]) {
        fail({ clause: 'ND-CREDIT-COST', message: `${job.label} ${job.id} costs ${String(credits)} credits`, expected: String(COST[job.kind]), received: String(credits), fix: 'Charge 10 credits per avatar and 20 per video, and state it in credits.', exchanges: [job.create] });
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
