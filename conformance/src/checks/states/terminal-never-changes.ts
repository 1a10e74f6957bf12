import { defineCheck, STATEFUL } from '../../check.ts';
import type { CheckContext } from '../../context.ts';
import type { Exchange } from '../../http.ts';
import { isJson, type TrackedJob } from '../../world.ts';
import { fail } from '../../outcome.ts';

/** Members that must not move once a job is terminal (contract: the record never changes). */
const FROZEN = ['status', 'error', 'video_url', 'preview_image_url', 'credits', 'completed_at', 'updated_at'];

/** File links keep their file; their query (expiry and signature) is renewed by each read (ND-FILE-LINKS). */
const LINKS: ReadonlySet<string> = new Set(['video_url', 'preview_image_url']);
const frozen = (member: string, value: unknown) => JSON.stringify(LINKS.has(member) && typeof value === 'string' ? value.split('?', 1)[0] : value);

export default defineCheck({
  id: 'states.terminal-never-changes',
  title: 'ready and failed are final: terminal records never change state',
  asserts: 'Once GET shows a job ready or failed, every later GET shows the same state (the contract: the whole record stays as it was).',
  clauses: ['ST-TERMINAL'],
  decisions: ['ND-STATES'],
  profiles: STATEFUL,
  waits: (a) => a.options.terminalObserveSeconds,
  async run(ctx) {
    const jobs = (await ctx.world.allSettled()).filter((job) => job.terminal !== undefined);
    if (jobs.length === 0) fail({ clause: 'ST-TERMINAL', message: 'no job of the run reached ready or failed, so finality could not be watched' });
    // Watch every terminal record for a while, reading it twice.
    const half = (ctx.options.terminalObserveSeconds * 1000) / 2;
    for (let round = 0; round < 2; round++) {
      await ctx.sleep(half);
      for (const job of jobs) {
        const exchange = await read(ctx, job);
        compare(ctx, job, exchange);
      }
    }
    // Nothing polled after the first terminal record may differ either.
    for (const job of jobs) {
      const first = job.polls.findIndex((poll) => poll.terminal !== undefined);
      const moved = job.polls.slice(first + 1).find((poll) => poll.status !== job.polls[first]?.status);
      if (first >= 0 && moved) {
        fail({ clause: 'ST-TERMINAL', message: `${job.label} ${job.id} went from ${job.polls[first]?.status} to ${moved.status}`, expected: `status stays ${job.polls[first]?.status}`, received: moved.status, fix: 'Never move a job out of ready or failed.' });
      }
    }
  },
});

function read(ctx: CheckContext, job: TrackedJob): Promise<Exchange> {
  const path = job.kind === 'avatar' ? `/v1/avatars/${job.id}` : `/v1/avatar-videos/${job.id}`;
  return ctx.http.send({ key: job.key, method: 'GET', path, note: `is ${job.label} still ${String(ctx.shape.state(job.terminal))}?` });
}

function compare(ctx: CheckContext, job: TrackedJob, exchange: Exchange): void {
  const before = job.terminal!;
  const was = ctx.shape.state(before);
  const now = ctx.shape.state(exchange.json);
  if (exchange.status !== 200 || now !== was) {
    fail({
      clause: 'ST-TERMINAL',
      message: `${job.label} ${job.id} was ${String(was)} and later read as ${now ?? `HTTP ${exchange.status}`}`,
      expected: `status ${String(was)} for good`,
      received: now ? `status ${now}` : `HTTP ${exchange.status}`,
      fix: 'ready and failed are terminal: nothing may change a job afterwards.',
      exchanges: [exchange],
    });
  }
  if (!ctx.contract || !isJson(exchange.json)) return;
  for (const member of FROZEN) {
    if (frozen(member, exchange.json[member]) !== frozen(member, before[member])) {
      fail({
        clause: 'ND-STATES',
        message: `${job.label} ${job.id} changed ${member} after it was ${String(was)}`,
        expected: JSON.stringify(before[member]),
        received: JSON.stringify(exchange.json[member]),
        fix: 'A terminal record never changes again (openapi/README.md, ND-STATES).',
        exchanges: [exchange],
      });
    }
  }
}
