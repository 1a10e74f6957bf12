import { defineCheck, STATEFUL } from '../../check.ts';
import { fail } from '../../outcome.ts';
import { AVATAR, judgeFailedHasError } from '../twins.ts';

export default defineCheck({
  id: 'avatars.failed-has-error',
  title: 'A failed avatar carries an error object',
  asserts: 'An avatar made to fail with the implementation\'s failure trigger ends in its failed state and its record then has an error object.',
  clauses: ['AV-FAILED-ERROR'],
  decisions: ['ND-SANDBOX-FAILURE', 'ND-AVATAR-FIELDS'],
  profiles: STATEFUL,
  needs: ['fail-trigger'],
  async run(ctx) {
    await judgeFailedHasError(ctx, AVATAR, await ctx.world.kickoffJob('failed-avatar'));
    if (!ctx.contract) return;
    const ready = await (await ctx.world.readyAvatar()).settled;
    if (ready.error !== null) {
      fail({ clause: 'ND-AVATAR-FIELDS', message: 'a ready avatar has a non-null error', expected: 'error: null', received: JSON.stringify(ready.error), fix: 'error is null unless status is failed.' });
    }
  },
});
