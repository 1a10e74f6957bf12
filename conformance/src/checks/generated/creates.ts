import { defineCheck, STATEFUL } from '../../check.ts';
import { generatedCount, generatorDeps } from '../../generated/deps.ts';
import { sendGenerated } from '../../generated/property.ts';
import { createRequests } from '../../generated/requests.ts';
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
  async run(ctx) {
    const before = ctx.shape.balance(await ctx.world.me('empty'));
    const count = generatedCount(ctx.options, 'creates');
    const result = await sendGenerated(ctx, createRequests(generatorDeps(ctx)), count, ctx.options.seed);
    ctx.note(`${result.sent} generated creates: ${Object.entries(result.byExpectation).map(([kind, n]) => `${n} ${kind}`).join(', ')}${result.unjudged ? `; ${result.unjudged} still refused with 429, not judged` : ''}`);
    const afterExchange = await ctx.world.me('empty');
    const after = ctx.shape.balance(afterExchange);
    if (before && after && (after.reserved !== before.reserved || after.used !== before.used)) {
      fail({ clause: 'CR-402-NO-JOB', message: 'the account without credits shows credits held or charged after the generated creates', expected: `reserved ${before.reserved} and used ${before.used}, unchanged`, received: `before: ${show(before)}; after: ${show(after)}`, fix: 'Reserve nothing for a refused request.', exchanges: [afterExchange] });
    }
  },
});
