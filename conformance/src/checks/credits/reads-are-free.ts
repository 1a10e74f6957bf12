import { defineCheck, STATEFUL } from '../../check.ts';
import { show } from '../../observe/ledger.ts';
import { fail, skip } from '../../outcome.ts';

export default defineCheck({
  id: 'credits.reads-are-free',
  title: 'Reading records and the account costs no credits',
  asserts: 'Where /v1/me shows balances: a series of GETs of records and of /v1/me leaves available, reserved and used exactly as they were.',
  clauses: ['CR-READ-FREE'],
  decisions: ['ND-ME'],
  profiles: STATEFUL,
  optionalIn: ['core', 'production'],
  async run(ctx) {
    // Measured when no job of the run is moving credits any more.
    const jobs = await ctx.world.allSettled();
    await Promise.allSettled(ctx.world.jobs.map((job) => job.settled));
    const first = await ctx.world.me('main');
    const before = ctx.shape.balance(first);
    if (!before) skip('GET /v1/me shows no credit balance where the implementation profile says (account.credits): nothing to observe from outside');
    const reads = [];
    for (const job of jobs.filter((j) => j.key === 'main' && j.id).slice(0, 4)) {
      const path = job.kind === 'avatar' ? `/v1/avatars/${job.id}` : `/v1/avatar-videos/${job.id}`;
      reads.push(await ctx.http.send({ key: 'main', method: 'GET', path, note: 'a read that must be free' }));
    }
    const last = await ctx.world.me('main');
    const after = ctx.shape.balance(last);
    if (!after) fail({ clause: 'CR-READ-FREE', message: 'GET /v1/me stopped showing the credit balance after a few reads', expected: 'the balance', received: last.bodyText.slice(0, 200), exchanges: [last] });
    if (after.available !== before.available || after.used !== before.used || after.reserved !== before.reserved) {
      fail({
        clause: 'CR-READ-FREE',
        message: `${reads.length + 1} reads changed the balance`,
        expected: show(before),
        received: show(after),
        fix: 'Never charge or reserve credits on GET requests.',
        exchanges: [first, ...reads.slice(0, 1), last],
      });
    }
  },
});
