import { fail, notApplicable } from '../../outcome.ts';
import { defineProxyCheck, recordsShown } from '../check.ts';

export default defineProxyCheck({
  id: 'service.failed-has-error',
  title: 'A failed avatar or video carries an error object',
  asserts: 'Every avatar or video record the service showed failed, in a GET answer or a webhook, carries an error object.',
  party: 'service',
  clauses: ['AV-FAILED-ERROR', 'VID-FAILED-ERROR'],
  run({ traffic, shape }) {
    const failed = recordsShown(traffic, shape).filter((shown) => shape.terminal(shape.state(shown.record)) === 'failed');
    if (failed.length === 0) notApplicable('no avatar or video was seen failed');
    const lacking = failed.find((shown) => typeof shown.record.error !== 'object' || shown.record.error === null || Array.isArray(shown.record.error));
    if (!lacking) return;
    fail({
      clause: lacking.kind === 'avatar' ? 'AV-FAILED-ERROR' : 'VID-FAILED-ERROR',
      message: `${lacking.kind === 'avatar' ? 'avatar' : 'video'} ${lacking.id} is failed without an error object in ${lacking.from}`,
      expected: '"error": {…}',
      received: `error: ${JSON.stringify(lacking.record.error ?? '(absent)')}`,
      fix: 'Put what went wrong in an error object on the failed record.',
      evidence: [JSON.stringify(lacking.record).slice(0, 400)],
    });
  },
});
