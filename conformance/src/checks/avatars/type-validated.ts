import { ALL, defineCheck } from '../../check.ts';
import { describe, expectInvalid, isSuccess, validPromptAvatar, without } from '../../expect.ts';
import { fail } from '../../outcome.ts';

export default defineCheck({
  id: 'avatars.type-validated',
  title: 'type must be prompt, photo or props',
  asserts: 'An avatar request whose type is missing or not exactly prompt, photo or props is refused as invalid, and the three valid types are accepted.',
  clauses: ['AV-TYPES'],
  decisions: ['ND-ERRORS', 'ND-ERROR-BODY'],
  profiles: ALL,
  lane: 'requests',
  async run(ctx) {
    const base = validPromptAvatar();
    await expectInvalid(ctx, { clause: 'AV-TYPES', what: 'type is "video"', path: '/v1/avatars', body: { ...base, type: 'video' }, field: 'type' });
    await expectInvalid(ctx, { clause: 'AV-TYPES', what: 'type is missing', path: '/v1/avatars', body: without(base, 'type'), field: 'type' });
    await expectInvalid(ctx, { clause: 'AV-TYPES', what: 'type is "Prompt" (case differs)', path: '/v1/avatars', body: { ...base, type: 'Prompt' }, field: 'type' });
    if (ctx.profile === 'mock') return;
    // The three valid types were requested by the run's own jobs.
    await ctx.world.kickoff();
    for (const label of ['prompt-avatar', 'photo-avatar', 'props-avatar'] as const) {
      const job = ctx.world.job(label);
      if (job && !isSuccess(job.create)) {
        fail({ clause: 'AV-TYPES', message: `a valid ${String(job.body.type)} avatar was refused`, expected: 'the request accepted', received: describe(job.create), fix: 'Accept all three types: prompt, photo and props.', exchanges: [job.create] });
      }
    }
  },
});
