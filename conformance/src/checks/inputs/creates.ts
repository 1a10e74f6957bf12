import { defineCheck, STATEFUL } from '../../check.ts';
import type { CheckContext } from '../../context.ts';
import { generatedCount, generatedWaits, generatorDeps } from '../../inputs/deps.ts';
import { sendGenerated } from '../../inputs/property.ts';
import { createRequests } from '../../inputs/requests.ts';
import { show } from '../../observe/ledger.ts';
import { fail } from '../../outcome.ts';

export default defineCheck({
  id: 'generated.creates',
  title: 'Generated create requests are all refused, each for its own reason',
  asserts:
    'Create requests generated from the request schemas (valid bodies, bodies that break one rule, JSON under another media type, JSON cut short), sent with the key without credits: none is accepted or fails with 5xx, and the account shows nothing reserved or used afterwards. Under the contract each gets its exact answer: 402 for a valid avatar, 404 naming avatar_id for a valid video of an avatar the account lacks, 422 naming the broken member, 415, 400; every answer as documented, with rate-limit headers that describe a possible window.',
  clauses: ['CR-402', 'CR-402-NO-JOB', 'AV-TYPES', 'AV-NAME', 'AV-PROMPT', 'AV-PHOTO', 'AV-PROPS', 'AV-AGE', 'RL-HEADERS'],
  decisions: ['ND-ERRORS', 'ND-ERROR-BODY', 'ND-VIDEO-REQUEST'],
  profiles: STATEFUL,
  needs: ['empty-key'],
  phase: 'generated',
  waits: (a) => generatedWaits(a, 'creates'),
  async run(ctx) {
    const beforeExchange = await ctx.world.me('empty');
    const before = ctx.shape.balance(beforeExchange);
    const count = withinTheDay(ctx, generatedCount(ctx.options, 'creates'), beforeExchange.json);
    const result = await sendGenerated(ctx, createRequests(generatorDeps(ctx)), count, ctx.options.seed);
    ctx.note(`${result.sent} generated creates: ${Object.entries(result.byExpectation).map(([kind, n]) => `${n} ${kind}`).join(', ')}${result.unjudged ? `; ${result.unjudged} still refused with 429, not judged` : ''}`);
    const afterExchange = await ctx.world.me('empty');
    const after = ctx.shape.balance(afterExchange);
    // With a sandbox clock the account's time moved days ahead, perhaps into another credit
    // period that starts from nothing: only a rise says something was held or charged.
    if (before && after && ((after.reserved ?? 0) > (before.reserved ?? 0) || (after.used ?? 0) > (before.used ?? 0))) {
      fail({ clause: 'CR-402-NO-JOB', message: 'the account without credits shows credits held or charged after the generated creates', expected: `reserved ${before.reserved} and used ${before.used}, no more`, received: `before: ${show(before)}; after: ${show(after)}`, fix: 'Reserve nothing for a refused request.', exchanges: [afterExchange] });
    }
  },
});

/**
 * Without a sandbox clock a day's window cannot be moved over, and waiting it out would
 * hold the run for a day: only as many creates as the key has left today are sent.
 */
function withinTheDay(ctx: CheckContext, count: number, me: unknown): number {
  if (ctx.clock.has('empty')) return count;
  const { expectedLimits, windowSeconds } = ctx.options;
  const day = expectedLimits.generation.find((_, i) => (windowSeconds[i] ?? 0) >= 86_400);
  if (day === undefined) return count; // no daily limit is expected: the minute windows are waited out
  const left = ctx.shape.generationWindows(me).find((window) => window.limit === day)?.remaining ?? day;
  // A few kept back for the shrinking of a failure.
  const room = Math.max(0, left - 5);
  if (room < count) ctx.note(`no sandbox clock on the key without credits: ${room} of the ${count} generated creates fit in what is left of its day`);
  return Math.min(count, room);
}
