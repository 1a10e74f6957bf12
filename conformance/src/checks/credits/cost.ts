import { CONTRACT_ONLY, defineCheck, fail } from '../../check.ts';
import { isJson } from '../../world.ts';
import { creditsOf } from './ledger.ts';

const COST = { avatar: 10, avatar_video: 20 } as const;

export default defineCheck({
  id: 'credits.cost',
  title: 'An avatar costs 10 credits and a video 20',
  clauses: [],
  decisions: ['ND-CREDIT-COST'],
  profiles: CONTRACT_ONLY,
  async run(ctx) {
    const jobs = await ctx.world.allSettled();
    for (const job of jobs.filter((j) => j.createdRecord)) {
      const credits = creditsOf(job);
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
