import { defineCheck, STATEFUL } from '../../check.ts';
import { balances, costOf, needShown, show } from '../../observe/ledger.ts';
import { fail, PrerequisiteError } from '../../outcome.ts';

export default defineCheck({
  id: 'credits.reserved-on-accept',
  title: "An accepted job holds its credits at once (seen in GET /v1/me)",
  asserts: 'Where /v1/me shows them: right after an avatar is accepted, available has gone down, and reserved plus used gone up, by at least its price (each judged where shown; reserved and used only together).',
  clauses: ['CR-RESERVE'],
  decisions: ['ND-ME', 'ND-CREDIT-COST'],
  profiles: STATEFUL,
  // The source does not say what /v1/me shows; where the profile says it shows no balance,
  // this source clause cannot be seen and the check is not applicable.
  notRequiredIn: ['core', 'production'],
  async run(ctx) {
    await ctx.world.kickoff();
    const job = ctx.world.job('prompt-avatar');
    if (!job?.id) throw new PrerequisiteError('the prompt avatar was not created');
    // Held is judged on reserved + used together: a job that already finished moved its
    // credits from one to the other. Spent is judged on available alone.
    const seesHeld = ctx.shape.shows('reserved') && ctx.shape.shows('used');
    if (!seesHeld) needShown(ctx.shape, ['available'], 'needs available, or reserved and used together, to see credits held', { any: true });
    const { before, after } = balances(ctx, 'main', 'before', 'after-first');
    const cost = costOf(ctx.shape, job) ?? 1;
    const held = seesHeld ? after.reserved! + after.used! - (before.reserved! + before.used!) : undefined;
    const spent = before.available !== undefined && after.available !== undefined ? before.available - after.available : undefined;
    // At least the job's cost: a job that already finished moved it from reserved to used.
    if ((held !== undefined && held < cost) || (spent !== undefined && spent < cost)) {
      fail({
        clause: 'CR-RESERVE',
        message: `right after avatar ${job.id} was accepted, its ${cost} credits were not held`,
        expected: [spent !== undefined ? `available down by ${cost}` : '', held !== undefined ? `reserved + used up by ${cost}` : ''].filter(Boolean).join(', '),
        received: `before: ${show(before)}; after: ${show(after)}`,
        fix: 'Reserve the credits in the same step that accepts the job, before answering.',
        exchanges: [ctx.world.snapshots.get('main:before')!, job.create, ctx.world.snapshots.get('main:after-first')!],
      });
    }
  },
});
