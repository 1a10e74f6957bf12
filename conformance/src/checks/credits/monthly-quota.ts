import { defineCheck, SANDBOX } from '../../check.ts';
import { needShown, show } from '../../observe/ledger.ts';
import { fail, skip } from '../../outcome.ts';

/** Longer than any month: whatever day a monthly period starts on, a move this long crosses into the next one. */
const PAST_A_MONTH_SECONDS = 32 * 86_400;

export default defineCheck({
  id: 'credits.monthly-quota',
  title: 'Credits are a monthly quota: the next month starts with the whole quota again',
  asserts:
    "With a sandbox clock and where /v1/me shows the credits used: once the run's jobs have ended, moving the main key's account 32 days ahead (past the end of any monthly period), and 32 days again, shows two fresh months with nothing used (nor reserved, where shown) and the same credits available, whatever the month of the run had: a one-off grant of that month is not carried over.",
  clauses: ['CR-MONTHLY-QUOTA'],
  decisions: ['ND-ME', 'ND-CREDIT-COST', 'ND-SANDBOX-CLOCK'],
  profiles: SANDBOX,
  needs: ['clock'],
  phase: 'clock',
  async run(ctx) {
    needShown(ctx.shape, ['used'], 'needs the credits used: without them a month that kept the last one\'s spending looks like a smaller quota');
    await ctx.world.allSettled();
    const beforeExchange = await ctx.world.me('main');
    const before = ctx.shape.balance(beforeExchange);
    if (!before) skip('GET /v1/me of the main key did not show the credit balance where the implementation profile says (account.credits)');
    // The source says only that credits are the monthly quota: a new month starts whole,
    // with nothing used or reserved. What the month of the run had is no guide to it (an
    // operator may have granted credits for that month alone), so two fresh months are
    // compared with each other, never with it.
    const months: { exchange: typeof beforeExchange; balance: ReturnType<typeof ctx.shape.balance> }[] = [];
    for (let i = 0; i < 2; i++) {
      if (!(await ctx.clock.advance('main', PAST_A_MONTH_SECONDS))) skip("the main key's sandbox clock refused to move 32 days");
      const exchange = await ctx.world.me('main');
      months.push({ exchange, balance: ctx.shape.balance(exchange) });
    }
    const [next, after] = months.map((m) => m.balance);
    const fresh = (month: typeof next) => month !== undefined && month.used === 0 && (month.reserved ?? 0) === 0;
    if (!next || !after || !fresh(next) || !fresh(after) || next.available !== after.available) {
      fail({
        clause: 'CR-MONTHLY-QUOTA',
        message: 'the months after the run do not each start with nothing used and the same whole quota',
        expected: `used 0${ctx.shape.shows('reserved') ? ' and reserved 0' : ''} in each of the next two months${ctx.shape.shows('available') ? ', and the same credits available in both' : ''}`,
        received: `before: ${show(before)}; 32 days later: ${next ? show(next) : 'no balance shown'}; 64 days later: ${after ? show(after) : 'no balance shown'}`,
        fix: 'Count used and reserved credits per monthly period, and start each period with the whole quota.',
        exchanges: [beforeExchange, ...months.map((m) => m.exchange)],
      });
    }
  },
});
