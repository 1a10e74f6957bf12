import { defineCheck, SANDBOX } from '../../check.ts';
import { show } from '../../observe/ledger.ts';
import { fail, skip } from '../../outcome.ts';

/** Longer than any month: whatever day a monthly period starts on, a move this long crosses into the next one. */
const PAST_A_MONTH_SECONDS = 32 * 86_400;

export default defineCheck({
  id: 'credits.monthly-quota',
  title: 'Credits are a monthly quota: the next month starts with the whole quota again',
  asserts:
    "With a sandbox clock and where /v1/me shows balances: once the run's jobs have ended, moving the main key's account 32 days ahead (past the end of any monthly period) leaves nothing used or reserved in the new period, and available is the whole quota again: what was available plus what the run used and held.",
  clauses: ['CR-MONTHLY-QUOTA'],
  decisions: ['ND-ME', 'ND-CREDIT-COST', 'ND-SANDBOX-CLOCK'],
  profiles: SANDBOX,
  needs: ['clock'],
  phase: 'clock',
  async run(ctx) {
    await ctx.world.allSettled();
    const beforeExchange = await ctx.world.me('main');
    const before = ctx.shape.balance(beforeExchange);
    if (!before) skip('GET /v1/me of the main key shows no credit balance where the implementation profile says (account.credits): nothing to observe from outside');
    if (!(await ctx.clock.advance('main', PAST_A_MONTH_SECONDS))) skip("the main key's sandbox clock refused to move 32 days");
    const afterExchange = await ctx.world.me('main');
    const after = ctx.shape.balance(afterExchange);
    const quota = before.available + before.used + before.reserved;
    if (!after || after.used !== 0 || after.reserved !== 0 || after.available !== quota) {
      fail({
        clause: 'CR-MONTHLY-QUOTA',
        message: `32 days later the main key's account does not have its whole quota of ${quota} credits again`,
        expected: `available ${quota}, reserved 0, used 0 in the new month`,
        received: `before: ${show(before)}; 32 days later: ${after ? show(after) : 'no balance shown'}`,
        fix: 'Count used and reserved credits per monthly period, and start each period with the whole quota.',
        exchanges: [beforeExchange, afterExchange],
      });
    }
  },
});
