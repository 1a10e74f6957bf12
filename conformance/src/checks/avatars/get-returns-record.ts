import { ALL, defineCheck } from '../../check.ts';
import type { CheckContext } from '../../context.ts';
import { AVATAR, judgeGetReturnsRecord } from '../twins.ts';

const EXAMPLE_ID = 'av_3k9x2m7q4w8e1r5t6y0u2i4o';

/** In the mock profile: the ID a create answers (a mock answers its example). */
async function createdInMock(ctx: CheckContext): Promise<string> {
  const created = await ctx.http.send({ key: 'main', method: 'POST', path: '/v1/avatars', json: { type: 'prompt', name: 'Mock', prompt: 'A presenter.' } });
  return ctx.shape.createdId('avatar', created.json) ?? EXAMPLE_ID;
}

export default defineCheck({
  id: 'avatars.get-returns-record',
  title: 'GET /v1/avatars/{id} answers the avatar record with its id',
  asserts: 'GET /v1/avatars/{id} answers 200 with the record, and the record\'s id is exactly the ID the create answer gave.',
  clauses: ['AV-GET'],
  decisions: ['ND-AVATAR-FIELDS', 'ND-ERRORS'],
  profiles: ALL,
  // A stateless mock has no run's jobs to read: the check makes its own.
  creates: (options) => (options.profile === 'mock' ? { avatar: 1 } : {}),
  async run(ctx) {
    const id = ctx.profile === 'mock' ? await createdInMock(ctx) : (await ctx.world.kickoffJob('prompt-avatar')).id!;
    await judgeGetReturnsRecord(ctx, AVATAR, id);
  },
});
