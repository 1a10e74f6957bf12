import { ALL, defineCheck } from '../../check.ts';
import type { CheckContext } from '../../context.ts';
import { notApplicable } from '../../outcome.ts';
import { judgeGetReturnsRecord, VIDEO } from '../twins.ts';

const EXAMPLE_ID = 'vid_8f2k4m6n1p3q5r7s9t0v2w4x';
const EXAMPLE_AVATAR_ID = 'av_3k9x2m7q4w8e1r5t6y0u2i4o';

/** In the mock profile: the ID a create answers (a mock answers its example). */
async function createdInMock(ctx: CheckContext): Promise<string> {
  const avatar = await ctx.http.send({ key: 'main', method: 'POST', path: '/v1/avatars', json: { type: 'prompt', name: 'Mock', prompt: 'A presenter.' } });
  const video = await ctx.http.send({ key: 'main', method: 'POST', path: '/v1/avatar-videos', json: ctx.shape.videoBody(ctx.shape.createdId('avatar', avatar.json) ?? EXAMPLE_AVATAR_ID, 'Hello.') });
  if (ctx.shape.carries(video, 'avatar_not_ready')) notApplicable('the service is stateful: a video needs a ready avatar, which the mock profile does not wait for (run the core profile)');
  return ctx.shape.createdId('avatar_video', video.json) ?? EXAMPLE_ID;
}

export default defineCheck({
  id: 'videos.get-returns-record',
  title: 'GET /v1/avatar-videos/{id} answers the video record with its id',
  asserts: 'GET /v1/avatar-videos/{id} answers 200 with the record, and the record\'s id is exactly the ID the create answer gave.',
  clauses: ['VID-GET'],
  decisions: ['ND-VIDEO-FIELDS', 'ND-ERRORS'],
  profiles: ALL,
  // A stateless mock has no run's jobs to read: the check makes its own avatar and video.
  creates: (options) => (options.profile === 'mock' ? { avatar: 1, avatar_video: 1 } : {}),
  async run(ctx) {
    const id = ctx.profile === 'mock' ? await createdInMock(ctx) : (await ctx.world.video()).id!;
    await judgeGetReturnsRecord(ctx, VIDEO, id);
  },
});
