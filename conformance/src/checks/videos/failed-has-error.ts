import { defineCheck, STATEFUL } from '../../check.ts';
import { fail } from '../../outcome.ts';
import { judgeFailedHasError, VIDEO } from '../twins.ts';

export default defineCheck({
  id: 'videos.failed-has-error',
  title: 'A failed video carries an error object',
  asserts: 'A video made to fail with the implementation\'s failure trigger ends in its failed state and its record then has an error object.',
  clauses: ['VID-FAILED-ERROR'],
  decisions: ['ND-SANDBOX-FAILURE', 'ND-VIDEO-FIELDS'],
  profiles: STATEFUL,
  needs: ['fail-trigger'],
  async run(ctx) {
    const record = await judgeFailedHasError(ctx, VIDEO, await ctx.world.failedVideo());
    if (!ctx.contract) return;
    if (record.video_url !== null) fail({ clause: 'ND-VIDEO-FIELDS', message: 'a failed video has a video_url', expected: 'video_url: null', received: JSON.stringify(record.video_url), fix: 'video_url is set on ready only.' });
  },
});
