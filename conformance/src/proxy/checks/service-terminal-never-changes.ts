import { fail, notApplicable } from '../../outcome.ts';
import { defineProxyCheck, recordsShown } from '../check.ts';

export default defineProxyCheck({
  id: 'service.terminal-never-changes',
  title: 'A record seen ready or failed never shows another state',
  asserts: 'Once the service showed an avatar or video ready or failed (a GET answer or a webhook), every later GET answer and webhook of it shows that same state.',
  party: 'service',
  clauses: ['ST-TERMINAL'],
  run({ traffic, shape }) {
    const shown = recordsShown(traffic, shape);
    const ended = new Map<string, { state: string; from: string }>();
    let judged = 0;
    for (const { kind, id, record, from } of shown) {
      const name = `${kind} ${id}`;
      const state = shape.state(record);
      const before = ended.get(name);
      if (before) {
        judged++;
        if (state !== before.state) {
          fail({
            clause: 'ST-TERMINAL',
            message: `${name} was ${before.state} in ${before.from}, then ${state ?? 'without a state'} in ${from}`,
            expected: `${before.state} from then on`,
            received: String(state),
            fix: 'Never change the state of a record once it is ready or failed.',
            evidence: [JSON.stringify(record).slice(0, 400)],
          });
        }
      } else if (state !== undefined && shape.terminal(state)) ended.set(name, { state, from });
    }
    if (judged === 0) notApplicable(ended.size === 0 ? 'no record was seen ready or failed' : 'no record was seen again after it was seen ready or failed');
  },
});
