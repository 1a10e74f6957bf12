import { CONTRACT_ONLY, defineCheck } from '../../check.ts';
import { fail } from '../../outcome.ts';

/**
 * ND-STATES: queued → processing → ready | failed, and queued → failed. Polling samples
 * the states, so a short `processing` may be missed: queued → ready is what a poller
 * sees of queued → processing → ready. Any move backwards, or out of a terminal state,
 * is a violation.
 *
 * The create answer is a sample too: it shows the state when it was answered, which is
 * where the job starts only if it was answered at once. An answer sent after generation
 * shows ready or failed although the job moved through queued; that answer breaks
 * ND-CREATE-RESPONSE (a new record is queued) and AV-ASYNC, which
 * avatars.create-returns-at-once judges, not the moves between states.
 */
const NEXT: Record<string, string[]> = { queued: ['processing', 'ready', 'failed'], processing: ['ready', 'failed'], ready: [], failed: [] };

export default defineCheck({
  id: 'states.transitions-documented',
  title: 'Jobs move only along queued → processing → ready | failed',
  asserts: 'Contract only: from the state its create answer showed, every job moves only along queued → processing → ready | failed, or queued → failed, and never back.',
  clauses: [],
  decisions: ['ND-STATES'],
  profiles: CONTRACT_ONLY,
  async run(ctx) {
    const jobs = (await ctx.world.allSettled()).filter((job) => job.polls.length > 0);
    for (const job of jobs) {
      // From the create answer's state: the first sample of the job.
      const states = [ctx.shape.state(job.createdRecord) ?? '(none)', ...job.polls.map((poll) => poll.status)];
      const path = states.filter((status, i, all) => i === 0 || all[i - 1] !== status);
      if (!(path[0]! in NEXT)) {
        fail({ clause: 'ND-STATES', message: `${job.label} ${job.id} showed ${path[0]}, which is not a documented state`, expected: Object.keys(NEXT).join(', '), received: path.join(' → '), fix: 'Use only the documented states.' });
      }
      for (let i = 1; i < path.length; i++) {
        const from = path[i - 1]!;
        const to = path[i]!;
        if (!(NEXT[from] ?? []).includes(to)) {
          fail({ clause: 'ND-STATES', message: `${job.label} ${job.id} moved ${from} → ${to}`, expected: `${from} → ${(NEXT[from] ?? []).join(' | ') || '(nothing)'}`, received: path.join(' → '), fix: 'Follow the documented state machine.' });
        }
      }
    }
  },
});
