import { ALL, defineCheck } from '../../check.ts';
import { describe, expectProblem } from '../../expect.ts';
import { type CheckContext } from '../../context.ts';
import { isJson } from '../../world.ts';
import { fail, notApplicable } from '../../outcome.ts';

const EXAMPLE_ID = 'vid_8f2k4m6n1p3q5r7s9t0v2w4x';

/** In the mock profile: the ID a create answers (a mock answers its example). */
async function createdInMock(ctx: CheckContext): Promise<string> {
  const avatar = await ctx.http.send({ key: 'main', method: 'POST', path: '/v1/avatars', json: { type: 'prompt', name: 'Mock', prompt: 'A presenter.' } });
  const video = await ctx.http.send({ key: 'main', method: 'POST', path: '/v1/avatar-videos', json: ctx.shape.videoBody(ctx.shape.createdId('avatar', avatar.json) ?? 'av_3k9x2m7q4w8e1r5t6y0u2i4o', 'Hello.') });
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
    const exchange = await ctx.http.send({ key: 'main', method: 'GET', path: `/v1/avatar-videos/${id}`, note: 'read a video' });
    const fix = 'Answer 200 with the video record, including its id.';
    if (exchange.status !== 200) fail({ clause: 'VID-GET', message: 'reading a video of this account failed', expected: '200', received: describe(exchange), fix, exchanges: [exchange] });
    const got = ctx.shape.recordId(exchange.json);
    if (!got || (ctx.profile !== 'mock' && got !== id)) {
      fail({ clause: 'VID-GET', message: 'the video record does not carry the requested id', expected: `"id": "${id}"`, received: got ? `"id": "${got}"` : 'no id', fix, exchanges: [exchange] });
    }
    if (!ctx.contract) return;
    const errors = ctx.validator.validateSchema('AvatarVideo', isJson(exchange.json) ? exchange.json : {});
    if (errors.length) fail({ clause: 'ND-VIDEO-FIELDS', message: 'the video record lacks documented members', expected: 'the AvatarVideo schema', received: errors.join('; '), fix: 'Return every member of the AvatarVideo schema.', exchanges: [exchange] });
    const unknown = await ctx.http.send({ key: 'main', method: 'GET', path: '/v1/avatar-videos/vid_000000000000000000000000', note: 'a video that does not exist' });
    expectProblem(unknown, 404, 'not_found', 'ND-ERRORS', 'reading a video that does not exist');
  },
});
