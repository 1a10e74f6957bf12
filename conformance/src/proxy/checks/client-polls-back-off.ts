import { fail, notApplicable } from '../../outcome.ts';
import { defineProxyCheck, describe, ms, recordRead, TIMING_MARGIN_MS } from '../check.ts';
import type { Seen } from '../traffic.ts';

/** From the fourth poll of a record on, polls are at least this far apart. */
export const MIN_POLL_GAP_MS = 1000;
/**
 * How far a gap may fall below the longest one before it: a client that draws each wait
 * from half to all of its step ("equal jitter") shows gaps down to half of the step,
 * and nothing in a backoff brings them lower.
 */
export const JITTER_SHARE = 0.5;
/** Polls of one record needed to judge it: the first rule starts with the fourth. */
const POLLS_TO_JUDGE = 4;

export default defineProxyCheck({
  id: 'client.polls-back-off',
  title: 'Polls of a record that is not yet terminal back off',
  asserts: `Polls (GETs of one avatar or video by one key, until an answer shows it ready or failed) are never less than ${MIN_POLL_GAP_MS / 1000} s apart from the fourth on, and no gap between two polls is shorter than ${JITTER_SHARE * 100} % of the longest gap before it (the most jitter can take off). A poll the client repeats after a 429 is judged by the wait for Retry-After instead.`,
  party: 'client',
  clauses: ['RL-CLIENT-BACKOFF'],
  run({ traffic, shape }) {
    const series = new Map<string, Seen[]>();
    const terminalAt = new Map<string, number>();
    for (const seen of traffic.exchanges) {
      const read = recordRead(seen);
      if (!read || seen.key === undefined || seen.status === 429) continue;
      const name = `${seen.key} ${read.kind} ${read.id}`;
      // Once an answer showed the record terminal, later reads are not polls.
      const ended = terminalAt.get(name);
      if (ended !== undefined && ended <= seen.arrivedAt) continue;
      series.set(name, [...(series.get(name) ?? []), seen]);
      if (seen.status >= 200 && seen.status < 300 && shape.terminal(shape.state(seen.responseJson))) terminalAt.set(name, Math.min(ended ?? Infinity, seen.answeredAt));
    }
    const judged = [...series.entries()].filter(([, polls]) => polls.length >= POLLS_TO_JUDGE);
    if (judged.length === 0) {
      const most = Math.max(0, ...[...series.values()].map((polls) => polls.length));
      notApplicable(
        series.size === 0
          ? 'no avatar or video was read by a key, so no polling was seen'
          : `no record was polled ${POLLS_TO_JUDGE} times before an answer showed it terminal (at most ${most}), so backoff cannot show yet; jobs that take longer, or more of them, give it room`,
      );
    }
    for (const [name, polls] of judged) {
      let longest = 0;
      for (let i = 1; i < polls.length; i++) {
        const gap = polls[i]!.arrivedAt - polls[i - 1]!.arrivedAt;
        const tight = i >= 3 && gap < MIN_POLL_GAP_MS - TIMING_MARGIN_MS;
        const shrank = gap < longest * JITTER_SHARE - TIMING_MARGIN_MS;
        if (tight || shrank) {
          const gaps = polls.slice(1, i + 1).map((poll, j) => ms(poll.arrivedAt - polls[j]!.arrivedAt));
          fail({
            clause: 'RL-CLIENT-BACKOFF',
            message: tight
              ? `${name} was polled ${ms(gap)} after the previous poll (poll ${i + 1}); gaps so far: ${gaps.join(', ')}`
              : `${name}: the gap before poll ${i + 1} fell to ${ms(gap)} after one of ${ms(longest)}; gaps so far: ${gaps.join(', ')}`,
            expected: tight ? `from the fourth poll on, at least ${MIN_POLL_GAP_MS / 1000} s between polls of a record` : `gaps that grow, or shrink by jitter only (to no less than ${JITTER_SHARE * 100} % of the longest before)`,
            received: `${polls.length} polls before the record was seen terminal`,
            fix: 'Wait longer after each poll (e.g. 1 s, then twice as long each time up to 30 s, with jitter), or use a webhook and poll rarely.',
            evidence: [describe(polls[i - 1]!), describe(polls[i]!)],
          });
        }
        longest = Math.max(longest, gap);
      }
    }
  },
});
