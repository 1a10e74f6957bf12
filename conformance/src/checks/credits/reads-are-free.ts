import { defineCheck, STATEFUL } from '../../check.ts';
import { changed, needShown, show } from '../../observe/ledger.ts';
import { fail, skip } from '../../outcome.ts';

export default defineCheck({
  id: 'credits.reads-are-free',
  title: 'Reading records and the account costs no credits',
  asserts: 'Where /v1/me shows balances: a series of GETs of records and of /v1/me leaves each of available, reserved and used that it shows exactly as it was.',
  clauses: ['CR-READ-FREE'],
  decisions: ['ND-ME'],
  profiles: STATEFUL,
  // A source clause, judged wherever /v1/me shows a balance (not applicable where the
  // profile says it shows none); the source does not say /v1/me shows one.
  notRequiredIn: ['core', 'production'],
  async run(ctx) {
    // Measured when no job of the run is moving credits any more.
    const jobs = await ctx.world.allSettled();
    await Promise.allSettled(ctx.world.jobs.map((job) => job.settled));
    needShown(ctx.shape, ['available', 'reserved', 'used'], 'needs a credit balance', { any: true });
    const first = await ctx.world.me('main');
    const before = ctx.shape.balance(first);
    if (!before) skip('GET /v1/me did not show the credit balance where the implementation profile says (account.credits)');
    const reads = [];
    for (const job of jobs.filter((j) => j.key === 'main' && j.id).slice(0, 4)) {
      const path = job.kind === 'avatar' ? `/v1/avatars/${job.id}` : `/v1/avatar-videos/${job.id}`;
      reads.push(await ctx.http.send({ key: 'main', method: 'GET', path, note: 'a read that must be free' }));
    }
    const last = await ctx.world.me('main');
    const after = ctx.shape.balance(last);
    if (!after) fail({ clause: 'CR-READ-FREE', message: 'GET /v1/me stopped showing the credit balance after a few reads', expected: 'the balance', received: last.bodyText.slice(0, 200), exchanges: [last] });
    // Whatever members are shown: a charge moves used or available, a hold reserved or available.
    const moved = changed(before, after);
    if (moved.length > 0) {
      fail({
        clause: 'CR-READ-FREE',
        message: `${reads.length + 1} reads changed the balance (${moved.join(', ')})`,
        expected: show(before),
        received: show(after),
        fix: 'Never charge or reserve credits on GET requests.',
        exchanges: [first, ...reads.slice(0, 1), last],
      });
    }
  },
});
