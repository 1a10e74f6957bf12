import { defineCheck, STATEFUL } from '../../check.ts';
import { generatedCount, generatedWaits, generatorDeps } from '../../inputs/deps.ts';
import { sendGenerated } from '../../inputs/property.ts';
import { readRequests } from '../../inputs/requests.ts';
import { notApplicable } from '../../outcome.ts';

export default defineCheck({
  id: 'generated.reads',
  title: 'Generated record IDs show nothing that is not the account’s own',
  asserts:
    "GETs of avatars and videos by generated IDs (any text, UUIDs, ID-like strings, another account's real IDs) with generated query parameters, sent with the key without credits: none shows a record or fails with 5xx. Under the contract each is 404 not_found as documented, with rate-limit headers that describe a possible window.",
  clauses: ['AUTH-ACCOUNT', 'AV-GET', 'VID-GET', 'RL-HEADERS'],
  decisions: ['ND-ERRORS', 'ND-ERROR-BODY'],
  profiles: STATEFUL,
  needs: ['empty-key'],
  phase: 'generated',
  waits: (a) => generatedWaits(a, 'reads'),
  async run(ctx) {
    const count = generatedCount(ctx.options, 'reads');
    if (count === 0) notApplicable(`--fuzz ${ctx.options.fuzz} leaves no generated reads (a quarter of the requests are reads)`);
    const result = await sendGenerated(ctx, readRequests(generatorDeps(ctx)), count, ctx.options.seed);
    ctx.note(`${result.sent} generated reads${result.unjudged ? `; ${result.unjudged} still refused with 429, not judged` : ''}`);
  },
});
