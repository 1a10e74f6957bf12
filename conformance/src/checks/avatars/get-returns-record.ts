import { ALL, defineCheck } from '../../check.ts';
import { describe, expectProblem } from '../../expect.ts';
import { isJson } from '../../world.ts';
import type { CheckContext } from '../../context.ts';
import { fail } from '../../outcome.ts';

const EXAMPLE_ID = 'av_3k9x2m7q4w8e1r5t6y0u2i4o';

/** In the mock profile: the ID a create answers (a mock answers its example). */
async function createdInMock(ctx: CheckContext): Promise<string> {
  const created = await ctx.http.send({ key: 'main', method: 'POST', path: '/v1/avatars', json: { type: 'prompt', name: 'Mock', prompt: 'A presenter.' } });
  return ctx.shape.createdId('avatar', created.json) ?? EXAMPLE_ID;
}

export default defineCheck({
  id: 'avatars.get-returns-record',
  title: 'GET /v1/avatars/{id} answers the avatar record with its id',
  asserts: 'GET /v1/avatars/{id} answers 200 with the record, and the record\'s id is exactly the ID the create answer gave.',
  clauses: ['AV-GET'],
  decisions: ['ND-AVATAR-FIELDS', 'ND-ERRORS'],
  profiles: ALL,
  // A stateless mock has no run's jobs to read: the check makes its own.
  creates: (options) => (options.profile === 'mock' ? { avatar: 1 } : {}),
  async run(ctx) {
    const id = ctx.profile === 'mock' ? await createdInMock(ctx) : (await ctx.world.kickoffJob('prompt-avatar')).id!;
    const exchange = await ctx.http.send({ key: 'main', method: 'GET', path: `/v1/avatars/${id}`, note: 'read an avatar' });
    const fix = 'Answer 200 with the avatar record, including its id.';
    if (exchange.status !== 200) fail({ clause: 'AV-GET', message: 'reading an avatar of this account failed', expected: '200', received: describe(exchange), fix, exchanges: [exchange] });
    const got = ctx.shape.recordId(exchange.json);
    if (!got || (ctx.profile !== 'mock' && got !== id)) {
      fail({ clause: 'AV-GET', message: 'the avatar record does not carry the requested id', expected: `"id": "${id}"`, received: got ? `"id": "${got}"` : 'no id', fix, exchanges: [exchange] });
    }
    if (!ctx.contract) return;
    const errors = ctx.validator.validateSchema('Avatar', isJson(exchange.json) ? exchange.json : {});
    if (errors.length) fail({ clause: 'ND-AVATAR-FIELDS', message: 'the avatar record lacks documented members', expected: 'the Avatar schema', received: errors.join('; '), fix: 'Return every member of the Avatar schema, null where it has no value yet.', exchanges: [exchange] });
    const unknown = await ctx.http.send({ key: 'main', method: 'GET', path: '/v1/avatars/av_000000000000000000000000', note: 'an avatar that does not exist' });
    expectProblem(unknown, 404, 'not_found', 'ND-ERRORS', 'reading an avatar that does not exist');
  },
});
