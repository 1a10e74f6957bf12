import { fail, notApplicable } from '../../outcome.ts';
import { defineProxyCheck, recordsShown } from '../check.ts';

export default defineProxyCheck({
  id: 'service.ready-video-has-url',
  title: 'A ready video carries video_url',
  asserts: 'Every video record the service showed ready, in a GET answer or a webhook, carries a non-empty video_url.',
  party: 'service',
  clauses: ['VID-READY-URL'],
  run({ traffic, shape }) {
    const ready = recordsShown(traffic, shape).filter((shown) => shown.kind === 'avatar_video' && shape.terminal(shape.state(shown.record)) === 'ready');
    if (ready.length === 0) notApplicable('no video was seen ready');
    const lacking = ready.find((shown) => typeof shown.record.video_url !== 'string' || shown.record.video_url === '');
    if (!lacking) return;
    fail({
      clause: 'VID-READY-URL',
      message: `video ${lacking.id} is ready without a video_url in ${lacking.from}`,
      expected: '"video_url": "<the video\'s URL>"',
      received: `video_url: ${JSON.stringify(lacking.record.video_url ?? '(absent)')}`,
      fix: 'Set video_url on the record when the video is ready, in the GET answer and the webhook alike.',
      evidence: [JSON.stringify(lacking.record).slice(0, 400)],
    });
  },
});
