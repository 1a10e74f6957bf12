import { ALL, defineCheck } from '../../check.ts';
import type { CheckContext } from '../../context.ts';
import { describe, isSuccess } from '../../expect.ts';
import type { Exchange } from '../../http.ts';
import type { JobKind } from '../../implementation/profile.ts';
import { CheckFailure, fail, skip } from '../../outcome.ts';
import { isJson, type TrackedJob } from '../../world.ts';

/**
 * Creates of a kind made when every job of it was done at its first read: each costs
 * credits (a video is the contract's dearest job), and three in a row done at once
 * is no slow moment of a loaded path any more.
 */
export const EXTRA_CREATES = 3;

const FIX = 'Queue the job and answer at once with its ID; generation goes on in the background.';

export default defineCheck({
  id: 'avatars.create-returns-at-once',
  title: 'Creating an avatar (or video) answers with its ID before generation finishes',
  asserts:
    'Each create answer is a success the implementation declares, with the new ID where its profile says; and it comes before the job ends: for avatars and for videos, some job is still pending when read right after its create answer. When every job of a kind in the run was already ready or failed at that first read and every one of their answers took longer than a job of the kind takes at most (the implementation profile\'s timings), generation ran inside the request. When they were done but their answers were quicker (a slow path can deliver an answer later than a short job takes), up to 3 more of that kind are created one at a time, each read the moment its answer arrives; a job of the kind seen pending passes, and all of them done at their first read means generation ran inside the request, whatever the answer said.',
  clauses: ['AV-ASYNC'],
  decisions: ['ND-CREATE-RESPONSE'],
  profiles: ALL,
  // The extra creates of each kind (in the mock profile, one of each).
  creates: () => ({ avatar: EXTRA_CREATES, avatar_video: EXTRA_CREATES }),
  // Only when every job of a kind was done at its first read: the extra creates and their
  // first reads (the two kinds' go on at once), and the one seen pending awaited to its
  // end and its last poll, so that the credit checks after this one see it settled. That
  // end is not counted again: the run's shared jobs of the kind, done at their first read,
  // spent none of the longest a job takes that the bound gave them before this check's
  // limit starts, and this check started when they were done.
  waits: (a) => EXTRA_CREATES * 2 * a.request + a.options.pollMaxDelayMs / 1000,
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
    const mine = (kind: JobKind) => jobs.filter((job) => job.kind === kind && job.key === 'main' && job.polls.length > 0 && !job.label.startsWith('unexpected'));
    // A kind whose answers all came after generation, slower than a whole job, fails the
    // check as soon as that is seen: no creates more of either kind.
    for (const kind of ['avatar', 'avatar_video'] as const) judgeSlowAnswers(ctx, kind, mine(kind));
    const judged = await Promise.allSettled((['avatar', 'avatar_video'] as const).map((kind) => judgeTiming(ctx, kind, mine(kind))));
    // A failure says more than a kind that could not be judged.
    const reasons = judged.flatMap((outcome) => (outcome.status === 'rejected' ? [outcome.reason as unknown] : []));
    const first = reasons.find((reason) => reason instanceof CheckFailure) ?? reasons[0];
    if (first !== undefined) throw first;
    // The extra jobs count in the after-snapshots of the credit checks that follow.
    await ctx.world.allSettled();
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
 * Every job of a kind done at its first read, and every one of their answers slower than
 * a whole job of the kind takes (the implementation's own timings): no slow moment of the
 * path, which another answer could tell apart, but generation inside the request.
 */
function judgeSlowAnswers(ctx: CheckContext, kind: JobKind, jobs: TrackedJob[]): void {
  const longest = ctx.options.jobSeconds[kind];
  if (jobs.length === 0 || jobs.some(pendingAtFirstRead) || !jobs.every((job) => job.create.durationMs > longest * 1000)) return;
  const path = kind === 'avatar' ? '/v1/avatars' : '/v1/avatar-videos';
  fail({
    clause: 'AV-ASYNC',
    message: `every ${kind} was already ${[...new Set(jobs.map((job) => job.polls[0]!.status))].join(' or ')} when read right after its POST ${path} was answered, and every answer took longer than the ${longest} s a ${kind} takes at most: generation ran before the answer`,
    expected: `answers within the ${longest} s a job takes at most (the implementation profile's timings, or --job-timeout), and a state other than ${ctx.shape.nameOf('ready')} or ${ctx.shape.nameOf('failed')} on the first read after one of them`,
    received: jobs.map((job) => `${job.label}: answered after ${job.create.durationMs} ms; read ${job.polls[0]!.sentAt - job.answeredAt} ms later: ${job.polls[0]!.status}`).join('; '),
    fix: FIX,
    exchanges: [jobs[0]!.create],
  });
}

/**
 * The first GET of every job is sent the moment its create answer arrives. If every job
 * of a kind was already terminal then, either the answer waited for generation or the
 * way to the service is slower than the job (a loaded machine, a proxy: an answer that
 * took 554 ms to come back through Prism, for a 200 ms job, was measured). One
 * observation cannot tell the two apart; more can: a service that answers after
 * generation is done at every first read, a slow path only some of the time. So up to
 * EXTRA_CREATES more jobs of the kind are made, one at a time, and the first seen
 * pending settles it. They cost credits, so they are made only on this path.
 */
async function judgeTiming(ctx: CheckContext, kind: JobKind, jobs: TrackedJob[]): Promise<void> {
  if (jobs.length === 0 || jobs.some(pendingAtFirstRead)) return;
  const path = kind === 'avatar' ? '/v1/avatars' : '/v1/avatar-videos';
  const extra: TrackedJob[] = [];
  for (let i = 1; i <= EXTRA_CREATES; i++) {
    const made = await ctx.world.extraJob(kind, `extra-${kind === 'avatar' ? 'avatar' : 'video'}-${i}`);
    if (!made.job) {
      skip(
        `every ${kind} of the run was already done at its first read, and ${i === 1 ? 'no further one' : `only ${i - 1} more`} could be made to tell a slow way to the service from an answer that waits for generation: POST ${path} answered ${describe(made.create)}`,
      );
    }
    // Done at its first read: settled then. Pending: awaited to its end, for the credit checks.
    await made.job.settled.catch(() => undefined);
    if (made.job.polls.length === 0) skip(`the extra ${kind} ${made.job.id} could not be read: ${made.job.label} has no answer to its GET`);
    if (pendingAtFirstRead(made.job)) {
      ctx.note(`every ${kind} of the run was done at its first read; the extra ${made.job.label} was ${made.job.polls[0]!.status} at its first read, so the answers come before generation ends`);
      return;
    }
    extra.push(made.job);
  }
  const all = [...jobs, ...extra];
  fail({
    clause: 'AV-ASYNC',
    message: `every ${kind} was already ${[...new Set(all.map((job) => job.polls[0]!.status))].join(' or ')} when read right after its POST ${path} was answered, the run's ${jobs.length} and ${extra.length} more made one at a time: generation ran before the answer`,
    expected: `a state other than ${ctx.shape.nameOf('ready')} or ${ctx.shape.nameOf('failed')} on the first read after the create answer, for at least one job`,
    received: all.map((job) => `${job.label}: answered after ${job.create.durationMs} ms; read ${job.polls[0]!.sentAt - job.answeredAt} ms later: ${job.polls[0]!.status}`).join('; '),
    fix: FIX,
    exchanges: [jobs[0]!.create, ...extra.slice(-1).map((job) => job.create)],
  });
}

function pendingAtFirstRead(job: TrackedJob): boolean {
  return job.polls.length > 0 && job.polls[0]!.terminal === undefined;
}
