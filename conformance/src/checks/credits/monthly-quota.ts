import { defineCheck, SANDBOX } from '../../check.ts';
import { show } from '../../observe/ledger.ts';
import { fail, skip } from '../../outcome.ts';

/** Longer than any month: whatever day a monthly period starts on, a move this long crosses into the next one. */
const PAST_A_MONTH_SECONDS = 32 * 86_400;

export default defineCheck({
  id: 'credits.monthly-quota',
  title: 'Credits are a monthly quota: the next month starts with the whole quota again',
  asserts:
    "With a sandbox clock and where /v1/me shows balances: once the run's jobs have ended, moving the main key's account 32 days ahead (past the end of any monthly period) leaves nothing used or reserved in the new period, with at least the credits available before; and 32 days later again the next month has the same whole quota.",
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
    // Two fresh months must agree: a grant for this month only, or a quota changed in it,
    // makes this month's total no guide to the next one's.
    const months: { exchange: (typeof beforeExchange); balance: ReturnType<typeof ctx.shape.balance> }[] = [];
    for (let i = 0; i < 2; i++) {
      if (!(await ctx.clock.advance('main', PAST_A_MONTH_SECONDS))) skip("the main key's sandbox clock refused to move 32 days");
      const exchange = await ctx.world.me('main');
      months.push({ exchange, balance: ctx.shape.balance(exchange) });
    }
    const [next, after] = months.map((m) => m.balance);
    if (!next || !after || next.used !== 0 || next.reserved !== 0 || next.available !== after.available || next.available < before.available) {
      fail({
        clause: 'CR-MONTHLY-QUOTA',
        message: "the month after the run does not start with nothing used and the same whole quota as the month after it",
        expected: 'used 0 and reserved 0 in the next month, and the same available credits in that month and the one after (at least the ones available before)',
        received: `before: ${show(before)}; 32 days later: ${next ? show(next) : 'no balance shown'}; 64 days later: ${after ? show(after) : 'no balance shown'}`,
        fix: 'Count used and reserved credits per monthly period, and start each period with the whole quota.',
        exchanges: [beforeExchange, ...months.map((m) => m.exchange)],
      });
    }
  },
});
