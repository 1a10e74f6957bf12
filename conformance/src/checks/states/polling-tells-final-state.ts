import { defineCheck, STATEFUL } from '../../check.ts';
import { fail } from '../../outcome.ts';

export default defineCheck({
  id: 'states.polling-tells-final-state',
  title: 'Polling alone takes every job of the run to ready or failed, webhook or not',
  asserts: 'Every job of the run, with a webhook or without, reaches the implementation\'s ready or failed state when polled, within the job timeout.',
  clauses: ['ST-POLL-TRUTH'],
  profiles: STATEFUL,
  async run(ctx) {
    const jobs = (await ctx.world.allSettled()).filter((job) => job.id !== undefined);
    if (jobs.length === 0) fail({ clause: 'ST-POLL-TRUTH', message: 'no job of the run was created, so there was nothing to poll' });
    const outcomes = await Promise.allSettled(jobs.map((job) => job.settled));
    outcomes.forEach((outcome, index) => {
      const job = jobs[index]!;
      if (outcome.status === 'rejected') {
        fail({
          clause: 'ST-POLL-TRUTH',
          message: `polling ${job.label} ${job.id} never showed ready or failed within ${ctx.options.jobSeconds[job.kind]} s (webhook: ${job.webhookMode ?? 'none'})`,
          expected: `status ${ctx.shape.nameOf('ready')} or ${ctx.shape.nameOf('failed')}`,
          received: `statuses seen: ${[...new Set(job.polls.map((p) => p.status))].join(' → ') || 'none'}`,
          fix: 'Finish every job and report its final state on GET; if jobs are just slow, state how long they take in the implementation profile\'s timings (or raise --job-timeout).',
        });
      }
    });
  },
});
