import { defineCheck, STATEFUL } from '../../check.ts';
import { changed, show } from '../../observe/ledger.ts';
import { fail, skip } from '../../outcome.ts';

export default defineCheck({
  id: 'credits.402-starts-nothing',
  title: 'After a 402 no job exists and nothing was reserved or charged',
  asserts: 'After a 402, no Location points at a new record, no webhook for the refused request ever arrives, and (where /v1/me shows credits) nothing was reserved or charged.',
  clauses: ['CR-402-NO-JOB'],
  profiles: STATEFUL,
  // No waits of its own: it listens for the webhook of a job the refused request might
  // have started until settleGraceMaxSeconds after that request, which was sent as the
  // run's jobs started; the shared jobs take longer than that to settle, and its limit
  // counts from then.
  needs: ['empty-key'],
  async run(ctx) {
    const exchange = await ctx.world.insufficientAttempt();
    if (exchange.status !== 402) skip(`the request without credits was answered ${exchange.status}, not 402 (see credits.insufficient-credits-402)`);
    if (exchange.responseHeaders.location) {
      fail({ clause: 'CR-402-NO-JOB', message: 'the 402 answer points at a new record', expected: 'no Location header', received: `Location: ${exchange.responseHeaders.location}`, fix: 'Create nothing when credits are short.', exchanges: [exchange] });
    }
    await ctx.world.allSettled();
    const before = ctx.shape.balance(ctx.world.snapshots.get('empty:before'));
    const after = ctx.shape.balance(ctx.world.snapshots.get('empty:after'));
    // Whatever members are shown: a hold or a charge moves one of them.
    const moved = before && after ? changed(before, after) : [];
    if (before && after && moved.length > 0) {
      fail({ clause: 'CR-402-NO-JOB', message: `the account without credits shows credits held or charged after its 402 (${moved.join(', ')} changed)`, expected: `${show(before)}, unchanged`, received: `before: ${show(before)}; after: ${show(after)}`, fix: 'Reserve nothing for a refused request.', exchanges: [exchange] });
    }
    // A job started despite the 402 would send its webhook when it ends: give it as long
    // as the run's own jobs took.
    if (ctx.receiver) {
      const deliveries = await ctx.receiver.waitFor('refused-402', 1, ctx.world.settleGraceMs(exchange.startedAt));
      if (deliveries.length > 0) {
        fail({ clause: 'CR-402-NO-JOB', message: 'a webhook arrived for the request that was refused with 402: a job was started anyway', expected: 'no event for a refused request', received: `${deliveries.length} delivery(ies), type ${JSON.stringify(ctx.shape.eventType(deliveries[0]!))}`, fix: 'Start the job only after the credit reservation succeeded.', exchanges: [exchange] });
      }
    }
  },
});
