import { ALL, defineCheck } from '../../check.ts';
import { expectInvalid, validPromptAvatar, validPropsAvatar, without } from '../../expect.ts';

export default defineCheck({
  id: 'avatars.name-required',
  title: 'name is required for every type',
  asserts: 'An avatar request without name (or with an empty one) is refused as invalid, whatever its type.',
  clauses: ['AV-NAME'],
  decisions: ['ND-ERRORS', 'ND-ERROR-BODY'],
  profiles: ALL,
  lane: 'requests',
  async run(ctx) {
    await expectInvalid(ctx, { clause: 'AV-NAME', what: 'a prompt avatar has no name', path: '/v1/avatars', body: without(validPromptAvatar(), 'name'), field: 'name' });
    await expectInvalid(ctx, { clause: 'AV-NAME', what: 'a props avatar has no name', path: '/v1/avatars', body: without(validPropsAvatar(), 'name'), field: 'name' });
    await expectInvalid(ctx, { clause: 'AV-NAME', what: 'name is a number', path: '/v1/avatars', body: validPromptAvatar({ name: 42 }), field: 'name' });
    if (ctx.contract) await expectInvalid(ctx, { clause: 'AV-NAME', what: 'name is empty', path: '/v1/avatars', body: validPromptAvatar({ name: '' }), field: 'name' });
  },
});
