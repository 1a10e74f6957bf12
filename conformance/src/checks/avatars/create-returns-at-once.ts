import { ALL, defineCheck, fail } from '../../check.ts';
import { describe, isSuccess, problemCode } from '../../expect.ts';
import type { Exchange } from '../../http.ts';
import { idOf, isJson, statusOf } from '../../world.ts';
import type { CheckContext } from '../../context.ts';

const TERMINAL = ['ready', 'failed'];

export default defineCheck({
  id: 'avatars.create-returns-at-once',
  title: 'Creating an avatar (or video) answers with its ID before generation finishes',
  clauses: ['AV-ASYNC'],
  decisions: ['ND-CREATE-RESPONSE'],
  profiles: ALL,
  async run(ctx) {
    if (ctx.profile === 'mock') {
      const avatar = await ctx.http.send({ key: 'main', method: 'POST', path: '/v1/avatars', json: { type: 'prompt', name: 'Mock', prompt: 'A presenter.' } });
      judge(ctx, avatar, '/v1/avatars');
      const video = await ctx.http.send({ key: 'main', method: 'POST', path: '/v1/avatar-videos', json: { avatar_id: idOf(avatar.json) ?? 'av_3k9x2m7q4w8e1r5t6y0u2i4o', script: 'Hello.' } });
      // A stateful service refuses a video from an avatar created a moment ago.
      if (problemCode(video) === 'avatar_not_ready') return ctx.note('the video half needs a ready avatar: run the core profile for it');
      judge(ctx, video, '/v1/avatar-videos');
      return;
    }
    await ctx.world.kickoff();
    const prompt = ctx.world.job('prompt-avatar');
    if (!prompt) fail({ clause: 'AV-ASYNC', message: 'the prompt avatar was never requested' });
    judge(ctx, prompt.create, '/v1/avatars');
    const video = await ctx.world.video();
    judge(ctx, video.create, '/v1/avatar-videos');
  },
});

function judge(ctx: CheckContext, exchange: Exchange, path: string): void {
  const fixCreate = 'Queue the job and answer at once with its ID; generation goes on in the background.';
  if (!isSuccess(exchange)) {
    fail({ clause: 'AV-ASYNC', message: `a valid POST ${path} was refused`, expected: ctx.contract ? '202 Accepted' : 'a 2xx answer with the new ID', received: describe(exchange), fix: fixCreate, exchanges: [exchange] });
  }
  const id = idOf(exchange.json);
  if (!id) fail({ clause: 'AV-ASYNC', message: `POST ${path} answered without an id`, expected: 'a JSON body with "id"', received: exchange.bodyText.slice(0, 200) || '(empty body)', fix: fixCreate, exchanges: [exchange] });
  const status = statusOf(exchange.json);
  if (status && TERMINAL.includes(status) && ctx.profile !== 'mock') {
    fail({
      clause: 'AV-ASYNC',
      message: `POST ${path} answered only once the job was ${status}: generation ran inside the request`,
      expected: 'an answer while the job is still pending',
      received: `status "${status}"`,
      fix: fixCreate,
      exchanges: [exchange],
    });
  }
  if (!ctx.contract) return;
  const detail = { clause: 'ND-CREATE-RESPONSE' as const, exchanges: [exchange], fix: 'Answer 202 with the whole new record (status queued) and Location: its path (openapi/README.md, ND-CREATE-RESPONSE).' };
  if (exchange.status !== 202) fail({ ...detail, message: `POST ${path} answered ${exchange.status}`, expected: '202', received: String(exchange.status) });
  if (status !== 'queued') fail({ ...detail, message: `POST ${path} answered a record in status ${String(status)}`, expected: 'status "queued"', received: String(status) });
  const location = exchange.responseHeaders.location;
  const expected = `${path === '/v1/avatars' ? '/v1/avatars' : '/v1/avatar-videos'}/${id}`;
  if (!location || !new URL(location, 'http://x').pathname.endsWith(expected)) {
    fail({ ...detail, message: `POST ${path} has no Location pointing at the new record`, expected: `Location: ${expected}`, received: location ?? 'no Location header' });
  }
  const errors = ctx.validator.validateSchema(path === '/v1/avatars' ? 'Avatar' : 'AvatarVideo', isJson(exchange.json) ? exchange.json : {});
  if (errors.length) fail({ ...detail, message: `POST ${path} answered something other than the full record`, expected: 'the record as GET returns it', received: errors.join('; ') });
}
