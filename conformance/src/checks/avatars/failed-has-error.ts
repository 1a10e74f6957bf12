import { defineCheck, STATEFUL } from '../../check.ts';
import { isJson } from '../../world.ts';
import { fail, skip } from '../../outcome.ts';

export default defineCheck({
  id: 'avatars.failed-has-error',
  title: 'A failed avatar carries an error object',
  asserts: 'An avatar made to fail with the implementation\'s failure trigger ends in its failed state and its record then has an error object.',
  clauses: ['AV-FAILED-ERROR'],
  decisions: ['ND-SANDBOX-FAILURE', 'ND-AVATAR-FIELDS'],
  profiles: STATEFUL,
  needs: ['fail-trigger'],
  async run(ctx) {
    const job = await ctx.world.kickoffJob('failed-avatar');
    const record = await job.settled;
    if (job.ended !== 'failed') {
      const ended = String(ctx.shape.state(record));
      if (ctx.contract) {
        fail({ clause: 'ND-SANDBOX-FAILURE', message: `an avatar requested with the failure trigger ended ${ended}`, expected: 'status failed', received: `status ${ended}`, fix: 'With a sandbox key, fail jobs whose avatar name contains the marker.', exchanges: [job.create] });
      }
      skip(`the failure trigger of the implementation profile did not make the avatar fail (it ended ${ended}); correct failure.avatar`);
    }
    if (!isJson(record.error)) {
      fail({ clause: 'AV-FAILED-ERROR', message: `failed avatar ${job.id} has no error object`, expected: 'an error object', received: `error: ${JSON.stringify(record.error)}`, fix: 'Set error on every failed avatar: say why it failed.' });
    }
    if (!ctx.contract) return;
    if (record.error.code !== 'sandbox_forced_failure' || typeof record.error.message !== 'string') {
      fail({ clause: 'ND-SANDBOX-FAILURE', message: 'the forced failure does not say it was forced', expected: '{"code": "sandbox_forced_failure", "message": "…"}', received: JSON.stringify(record.error), fix: 'Use error.code sandbox_forced_failure for the sandbox trigger.' });
    }
    const ready = await (await ctx.world.readyAvatar()).settled;
    if (ready.error !== null) {
      fail({ clause: 'ND-AVATAR-FIELDS', message: 'a ready avatar has a non-null error', expected: 'error: null', received: JSON.stringify(ready.error), fix: 'error is null unless status is failed.' });
    }
  },
});
