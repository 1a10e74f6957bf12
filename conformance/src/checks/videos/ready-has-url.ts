import { defineCheck, STATEFUL } from '../../check.ts';
import { fail, PrerequisiteError } from '../../outcome.ts';

export default defineCheck({
  id: 'videos.ready-has-url',
  title: 'A ready video carries video_url',
  asserts: 'A video that reached ready has video_url, an absolute URL (the contract: null until then).',
  clauses: ['VID-READY-URL'],
  decisions: ['ND-VIDEO-FIELDS'],
  profiles: STATEFUL,
  async run(ctx) {
    const job = await ctx.world.video();
    const record = await job.settled;
    if (job.ended !== 'ready') throw new PrerequisiteError(`the run's video ended ${String(ctx.shape.state(record))}: ${JSON.stringify(record.error)}`);
    const url = record.video_url;
    let valid = false;
    try {
      valid = typeof url === 'string' && Boolean(new URL(url).protocol);
    } catch {
      valid = false;
    }
    if (!valid) {
      fail({ clause: 'VID-READY-URL', message: `ready video ${job.id} has no usable video_url`, expected: 'video_url: an absolute URL', received: `video_url: ${JSON.stringify(url)}`, fix: 'Set video_url when the video reaches ready.' });
    }
    if (!ctx.contract) return;
    const early = job.polls.find((poll) => poll.terminal !== 'ready' && poll.record.video_url !== null);
    if (early) fail({ clause: 'ND-VIDEO-FIELDS', message: `video_url was set while the video was ${early.status}`, expected: 'video_url: null until ready', received: JSON.stringify(early.record.video_url), fix: 'Keep video_url null until the video is ready.' });
  },
});
