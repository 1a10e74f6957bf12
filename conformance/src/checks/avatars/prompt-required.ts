import { ALL, defineCheck } from '../../check.ts';
import { expectInvalid, validPromptAvatar, without } from '../../expect.ts';

export default defineCheck({
  id: 'avatars.prompt-required',
  title: 'A prompt avatar needs a prompt',
  asserts: 'A prompt avatar without prompt (or with an empty one) is refused as invalid.',
  clauses: ['AV-PROMPT'],
  decisions: ['ND-ERRORS', 'ND-ERROR-BODY'],
  profiles: ALL,
  lane: 'requests',
  async run(ctx) {
    await expectInvalid(ctx, { clause: 'AV-PROMPT', what: 'type is prompt and prompt is missing', path: '/v1/avatars', body: without(validPromptAvatar(), 'prompt'), field: 'prompt' });
    await expectInvalid(ctx, { clause: 'AV-PROMPT', what: 'prompt is not a string', path: '/v1/avatars', body: validPromptAvatar({ prompt: 7 }), field: 'prompt' });
    if (ctx.contract) await expectInvalid(ctx, { clause: 'AV-PROMPT', what: 'prompt is empty', path: '/v1/avatars', body: validPromptAvatar({ prompt: '' }), field: 'prompt' });
  },
});
