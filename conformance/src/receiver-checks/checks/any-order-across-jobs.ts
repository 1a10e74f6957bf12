import { AVATAR_READY, defineReceiverCheck, expectAccepted } from '../check.ts';

export default defineReceiverCheck({
  id: 'receiver.any-order-across-jobs',
  title: 'Events of two jobs delivered in the reverse order of the jobs are both acknowledged',
  asserts:
    'Of two new jobs, the later one\'s event is delivered first and the earlier one\'s second; both are answered 2xx, because the source guarantees no order across jobs and a receiver tells events apart by id and data.object.id.',
  clauses: ['WH-ORDER'],
  deliveries: 2,
  async run(ctx) {
    const earlier = ctx.events.make(AVATAR_READY);
    const later = ctx.events.make(AVATAR_READY);
    const fix = 'handle each event on its own, keyed by its id and data.object.id; never refuse one for arriving after an event of a newer job';
    expectAccepted(await ctx.deliver(later, { label: `the event of the later job (created ${later.objectCreatedAt})` }), 'WH-ORDER', 'a fresh event of a job must be acknowledged', fix);
    expectAccepted(
      await ctx.deliver(earlier, { label: `then the event of the earlier job (created ${earlier.objectCreatedAt})` }),
      'WH-ORDER',
      'events of different jobs may arrive in any order: the retry of an older job\'s event comes after newer jobs\' events',
      fix,
    );
  },
});
