import { ALL, defineCheck } from '../../check.ts';
import type { CheckContext } from '../../context.ts';
import { describe, isSuccess } from '../../expect.ts';
import type { Exchange } from '../../http.ts';
import type { JobKind } from '../../implementation/profile.ts';
import { fail } from '../../outcome.ts';
import { isJson, type TrackedJob } from '../../world.ts';

const FIX = 'Queue the job and answer at once with its ID; generation goes on in the background.';

export default defineCheck({
  id: 'avatars.create-returns-at-once',
  title: 'Creating an avatar (or video) answers with its ID before generation finishes',
  asserts:
    'Each create answer is a success the implementation declares, with the new ID where its profile says; and it comes before the job ends: for avatars and for videos, some job of the run is still pending when read right after its create answer. A job already ready or failed at that first read, for every job of its kind, means generation ran inside the request, whatever the answer said.',
  clauses: ['AV-ASYNC'],
  decisions: ['ND-CREATE-RESPONSE'],
  profiles: ALL,
  async run(ctx) {
    if (ctx.profile === 'mock') {
      const avatar = await ctx.http.send({ key: 'main', method: 'POST', path: '/v1/avatars', json: { type: 'prompt', name: 'Mock', prompt: 'A presenter.' } });
      judgeAnswer(ctx, 'avatar', avatar);
      const avatarId = ctx.shape.createdId('avatar', avatar.json) ?? 'av_3k9x2m7q4w8e1r5t6y0u2i4o';
      const video = await ctx.http.send({ key: 'main', method: 'POST', path: '/v1/avatar-videos', json: ctx.shape.videoBody(avatarId, 'Hello.') });
      // A stateful service refuses a video from an avatar created a moment ago.
      if (ctx.shape.carries(video, 'avatar_not_ready')) return ctx.note('the video half needs a ready avatar: run the core profile for it');
      judgeAnswer(ctx, 'avatar_video', video);
      return;
    }
    await ctx.world.kickoff();
    const prompt = ctx.world.job('prompt-avatar');
    if (!prompt) fail({ clause: 'AV-ASYNC', message: 'the prompt avatar was never requested' });
    judgeAnswer(ctx, 'avatar', prompt.create);
    const video = await ctx.world.video();
    judgeAnswer(ctx, 'avatar_video', video.create);
    // Judged by time: what GET showed right after each create answer.
    const jobs = await ctx.world.allSettled();
    if (ctx.contract) {
      // Every other create answer of the run states a new record as well (ND-CREATE-RESPONSE: queued).
      for (const job of jobs.filter((j) => j.key === 'main' && j.createdRecord && !j.label.startsWith('unexpected'))) {
        const status = ctx.shape.state(job.createdRecord);
        if (status !== 'queued') fail({ clause: 'ND-CREATE-RESPONSE', message: `the create answer of ${job.label} ${job.id} shows status ${String(status)}`, expected: 'status "queued"', received: String(status), fix: 'Answer 202 with the new record at once, in status queued (openapi/README.md, ND-CREATE-RESPONSE).', exchanges: [job.create] });
      }
    }
    for (const kind of ['avatar', 'avatar_video'] as const) judgeTiming(ctx, kind, jobs.filter((job) => job.kind === kind && job.key === 'main' && job.polls.length > 0 && !job.label.startsWith('unexpected')));
  },
});

function judgeAnswer(ctx: CheckContext, kind: JobKind, exchange: Exchange): void {
  const path = kind === 'avatar' ? '/v1/avatars' : '/v1/avatar-videos';
  const statuses = ctx.shape.profile.create[kind === 'avatar' ? 'avatar' : 'video'].statuses;
  if (!isSuccess(exchange)) {
    fail({ clause: 'AV-ASYNC', message: `a valid POST ${path} was refused`, expected: ctx.contract ? '202 Accepted' : `${statuses.join(' or ')} with the new ID`, received: describe(exchange), fix: FIX, exchanges: [exchange] });
  }
  if (!ctx.shape.isCreated(kind, exchange.status)) {
    fail({ clause: 'AV-ASYNC', message: `POST ${path} answered ${exchange.status}, which the implementation profile does not list as its success`, expected: statuses.join(' or '), received: String(exchange.status), fix: 'Answer creation with the status the implementation documents, or correct create.*.statuses in the profile.', exchanges: [exchange] });
  }
  const id = ctx.shape.createdId(kind, exchange.json);
  const pointer = ctx.shape.profile.create[kind === 'avatar' ? 'avatar' : 'video'].id;
  if (!id) fail({ clause: 'AV-ASYNC', message: `POST ${path} answered without an ID at ${pointer}`, expected: `a JSON body with the new ID at ${pointer}`, received: exchange.bodyText.slice(0, 200) || '(empty body)', fix: FIX, exchanges: [exchange] });
  if (!ctx.contract) return;
  const status = ctx.shape.state(exchange.json);
  const detail = { clause: 'ND-CREATE-RESPONSE' as const, exchanges: [exchange], fix: 'Answer 202 with the whole new record (status queued) and Location: its path (openapi/README.md, ND-CREATE-RESPONSE).' };
  if (exchange.status !== 202) fail({ ...detail, message: `POST ${path} answered ${exchange.status}`, expected: '202', received: String(exchange.status) });
  if (status !== 'queued') fail({ ...detail, message: `POST ${path} answered a record in status ${String(status)}`, expected: 'status "queued"', received: String(status) });
  const location = exchange.responseHeaders.location;
  const expected = `${path}/${id}`;
  if (!location || !new URL(location, 'http://x').pathname.endsWith(expected)) {
    fail({ ...detail, message: `POST ${path} has no Location pointing at the new record`, expected: `Location: ${expected}`, received: location ?? 'no Location header' });
  }
  const errors = ctx.validator.validateSchema(kind === 'avatar' ? 'Avatar' : 'AvatarVideo', isJson(exchange.json) ? exchange.json : {});
  if (errors.length) fail({ ...detail, message: `POST ${path} answered something other than the full record`, expected: 'the record as GET returns it', received: errors.join('; ') });
}

/**
 * The first GET of every job is sent the moment its create answer arrives. If every job
 * of a kind was already terminal then, no job was ever seen pending after its answer:
 * the answer waited for generation.
 */
function judgeTiming(ctx: CheckContext, kind: JobKind, jobs: TrackedJob[]): void {
  if (jobs.length === 0 || jobs.some((job) => job.polls[0]!.terminal === undefined)) return;
  const first = jobs[0]!;
  const poll = first.polls[0]!;
  const path = kind === 'avatar' ? '/v1/avatars' : '/v1/avatar-videos';
  fail({
    clause: 'AV-ASYNC',
    message: `every ${kind} of the run was already ${jobs.map((job) => job.polls[0]!.status).filter((s, i, all) => all.indexOf(s) === i).join(' or ')} when read right after its POST ${path} was answered: generation ran before the answer`,
    expected: `a state other than ${ctx.shape.nameOf('ready')} or ${ctx.shape.nameOf('failed')} on the first read after the create answer, for at least one job`,
    received: `${first.label}: answered after ${first.create.durationMs} ms; read ${poll.sentAt - first.answeredAt} ms later: ${poll.status}`,
    fix: FIX,
    exchanges: [first.create],
  });
}
