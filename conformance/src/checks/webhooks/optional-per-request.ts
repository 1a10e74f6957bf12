import { defineCheck, STATEFUL } from '../../check.ts';
import { describe, isSuccess } from '../../expect.ts';
import { arrivals } from '../../observe/arrivals.ts';
import { fail } from '../../outcome.ts';

export default defineCheck({
  id: 'webhooks.optional-per-request',
  title: 'webhook_url is optional and accepted on both POSTs',
  asserts: 'Both POSTs accept webhook_url and its job\'s event arrives there; a request without webhook_url is accepted and its job still completes.',
  clauses: ['WH-OPTIONAL'],
  decisions: ['ND-AVATAR-FIELDS', 'ND-VIDEO-FIELDS'],
  profiles: STATEFUL,
  needs: ['receiver'],
  async run(ctx) {
    const all = await arrivals(ctx);
    // With: an avatar and a video asked for one and got it.
    for (const kind of ['avatar', 'avatar_video'] as const) {
      const asked = ctx.world.jobs.filter((job) => job.kind === kind && job.webhookUrl && job.key === 'main' && !job.label.startsWith('unexpected'));
      const refused = asked.find((job) => !isSuccess(job.create));
      if (refused) fail({ clause: 'WH-OPTIONAL', message: `a ${kind} request with webhook_url was refused`, expected: 'accepted', received: describe(refused.create), fix: 'Accept webhook_url on POST /v1/avatars and POST /v1/avatar-videos.', exchanges: [refused.create] });
      if (asked.length > 0 && !all.some((a) => a.job.kind === kind && a.deliveries.length > 0)) {
        fail({ clause: 'WH-OPTIONAL', message: `no ${kind} job with webhook_url got a delivery`, expected: 'its terminal event at its webhook_url', received: 'nothing', fix: 'Send the terminal event to the webhook_url of the request.' });
      }
      if (ctx.contract) {
        const job = asked.find((j) => j.terminal);
        if (job && job.terminal!.webhook_url !== job.webhookUrl) fail({ clause: 'ND-AVATAR-FIELDS', message: `${job.label} does not echo its webhook_url`, expected: String(job.webhookUrl), received: JSON.stringify(job.terminal!.webhook_url) });
      }
    }
    // Without: the props avatar asked for none and still completed.
    await ctx.world.allSettled();
    const plain = ctx.world.job('props-avatar');
    if (plain && !isSuccess(plain.create)) {
      fail({ clause: 'WH-OPTIONAL', message: 'an avatar request without webhook_url was refused', expected: 'accepted', received: describe(plain.create), fix: 'webhook_url is optional.', exchanges: [plain.create] });
    }
    if (plain && plain.create.status < 300 && !plain.terminal) {
      fail({ clause: 'WH-OPTIONAL', message: 'an avatar without webhook_url never finished', expected: 'ready or failed by polling', received: plain.polls.at(-1)?.status ?? 'nothing polled' });
    }
  },
});
