import { defineCheck, STATEFUL } from '../../check.ts';
import { isJson } from '../../world.ts';
import { fail, skip } from '../../outcome.ts';

export default defineCheck({
  id: 'videos.failed-has-error',
  title: 'A failed video carries an error object',
  asserts: 'A video made to fail with the implementation\'s failure trigger ends in its failed state and its record then has an error object.',
  clauses: ['VID-FAILED-ERROR'],
  decisions: ['ND-SANDBOX-FAILURE', 'ND-VIDEO-FIELDS'],
  profiles: STATEFUL,
  needs: ['fail-trigger'],
  async run(ctx) {
    const job = await ctx.world.failedVideo();
    const record = await job.settled;
    if (job.ended !== 'failed') {
      const ended = String(ctx.shape.state(record));
      if (ctx.contract) {
        fail({ clause: 'ND-SANDBOX-FAILURE', message: `a video requested with the failure trigger ended ${ended}`, expected: 'status failed', received: `status ${ended}`, fix: 'With a sandbox key, fail videos whose script contains the marker.', exchanges: [job.create] });
      }
      skip(`the failure trigger of the implementation profile did not make the video fail (it ended ${ended}); correct failure.video`);
    }
    if (!isJson(record.error)) {
      fail({ clause: 'VID-FAILED-ERROR', message: `failed video ${job.id} has no error object`, expected: 'an error object', received: `error: ${JSON.stringify(record.error)}`, fix: 'Set error on every failed video: say why it failed.' });
    }
    if (!ctx.contract) return;
    if (record.error.code !== 'sandbox_forced_failure') {
      fail({ clause: 'ND-SANDBOX-FAILURE', message: 'the forced failure does not say it was forced', expected: 'error.code sandbox_forced_failure', received: JSON.stringify(record.error), fix: 'Use error.code sandbox_forced_failure for the sandbox trigger.' });
    }
    if (record.video_url !== null) fail({ clause: 'ND-VIDEO-FIELDS', message: 'a failed video has a video_url', expected: 'video_url: null', received: JSON.stringify(record.video_url), fix: 'video_url is set on ready only.' });
  },
});
