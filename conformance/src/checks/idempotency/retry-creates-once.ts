import { defineCheck, STATEFUL } from '../../check.ts';
import { describe, problemCode } from '../../expect.ts';
import type { Exchange } from '../../http.ts';
import { fail, notApplicable } from '../../outcome.ts';

export default defineCheck({
  id: 'idempotency.retry-creates-once',
  title: 'A create sent again with its idempotency key creates nothing more',
  asserts:
    "Where the implementation profile names idempotency keys: a create sent twice with one key and one body answers the same record both times (the second marked as a replay where the profile names that header); the key sent with another body is refused with one of the profile's statuses (under the contract, 409 idempotency_key_reused) and creates nothing.",
  clauses: [],
  decisions: ['ND-IDEMPOTENCY'],
  profiles: STATEFUL,
  // The source has no idempotency keys: an implementation without them is not wrong.
  notRequiredIn: ['core', 'production'],
  // The first create, the same again, and the key with another body: one job if keys hold.
  creates: () => ({ avatar: 3 }),
  // After the credit checks, so that the jobs it makes on the main key change none of their figures
  // (the phase of the clock checks, which come last on that key; it needs no clock itself).
  phase: 'clock',
  // Requests in flight together are left to the implementation's own tests: answers whose
  // counts were taken in another order than they were sent would read, to the rate-limit
  // checks, as a Remaining that went up.
  async run(ctx) {
    const feature = ctx.shape.profile.idempotency;
    if (!feature) notApplicable('the implementation profile names no idempotency keys (idempotency)');
    await ctx.world.allSettled();
    const run = Math.random().toString(36).slice(2, 10);
    const body = (name: string) => ctx.shape.avatarBody({ type: 'prompt', name, prompt: 'A presenter made twice only if idempotency keys do not hold.' });
    const send = (key: string, json: unknown, note: string) =>
      ctx.http.send({ key: 'main', method: 'POST', path: '/v1/avatars', json, headers: { [feature.header]: key }, note });
    const created = (exchange: Exchange) => (ctx.shape.isCreated('avatar', exchange.status) ? ctx.shape.createdId('avatar', exchange.json) : undefined);

    const key = `conformance-${run}-a`;
    const first = await send(key, body('Conformance idempotency'), 'create with an idempotency key');
    const firstId = created(first);
    if (!firstId) fail({ clause: 'ND-IDEMPOTENCY', message: `a create with ${feature.header} was not accepted: ${describe(first)}`, expected: 'the create accepted, as without the key', received: describe(first), fix: `Accept ${feature.header} on the creates.`, exchanges: [first] });
    const again = await send(key, body('Conformance idempotency'), 'the same create again, same key');
    const againId = created(again);
    if (againId !== firstId) {
      fail({
        clause: 'ND-IDEMPOTENCY',
        message: againId ? `the same create sent again with its key made another record (${againId}, first ${firstId})` : `the same create sent again with its key was answered ${describe(again)}, not the first answer`,
        expected: `the first answer again: ${first.status} with id ${firstId}`,
        received: describe(again),
        fix: 'Keep each key with the job it created, and answer a request with a kept key and the same body with that first answer, creating nothing.',
        exchanges: [first, again],
      });
    }
    if (feature.replayedHeader && again.responseHeaders[feature.replayedHeader.toLowerCase()] === undefined) {
      fail({ clause: 'ND-IDEMPOTENCY', message: `the replayed answer lacks ${feature.replayedHeader}`, expected: `${feature.replayedHeader} on the second answer`, received: 'no such header', fix: `Mark a replayed answer with ${feature.replayedHeader}.`, exchanges: [again] });
    }

    const reused = await send(key, body('Conformance idempotency, another body'), 'the same key with another body');
    const reusedCode = problemCode(reused);
    if (!feature.reused.includes(reused.status) || (ctx.contract && reusedCode !== 'idempotency_key_reused')) {
      fail({
        clause: 'ND-IDEMPOTENCY',
        message: `the key sent again with another body was answered ${describe(reused)}`,
        expected: `${feature.reused.join(' or ')}${ctx.contract ? ' idempotency_key_reused' : ''}, creating nothing`,
        received: describe(reused),
        fix: 'Refuse a kept key sent with another body: the client reused a key by mistake, and neither answer would be right.',
        exchanges: [first, reused],
      });
    }
  },
});
