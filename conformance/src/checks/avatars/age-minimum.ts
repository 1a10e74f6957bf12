import { ALL, defineCheck } from '../../check.ts';
import { describe, expectInvalid, isSuccess, validPropsAvatar } from '../../expect.ts';
import { fail } from '../../outcome.ts';

export default defineCheck({
  id: 'avatars.age-minimum',
  title: 'age is an integer of at least 20',
  asserts: 'A props avatar aged 19, 20.5 or "30" is refused as invalid with a validation status the implementation declares, and one aged exactly 20 is accepted.',
  clauses: ['AV-AGE'],
  decisions: ['ND-ERRORS', 'ND-ERROR-BODY'],
  profiles: ALL,
  lane: 'requests',
  async run(ctx) {
    await expectInvalid(ctx, { clause: 'AV-AGE', what: 'age is 19', path: '/v1/avatars', body: validPropsAvatar({ age: 19 }), field: 'age' });
    await expectInvalid(ctx, { clause: 'AV-AGE', what: 'age is 20.5', path: '/v1/avatars', body: validPropsAvatar({ age: 20.5 }), field: 'age' });
    await expectInvalid(ctx, { clause: 'AV-AGE', what: 'age is the string "30"', path: '/v1/avatars', body: validPropsAvatar({ age: '30' }), field: 'age' });
    if (ctx.profile === 'mock') return;
    // The run's props avatar is 20: the boundary must be accepted.
    await ctx.world.kickoff();
    const props = ctx.world.job('props-avatar');
    if (props && !isSuccess(props.create)) {
      fail({ clause: 'AV-AGE', message: 'a props avatar aged exactly 20 was refused', expected: 'accepted', received: describe(props.create), fix: 'The minimum is inclusive: 20 is allowed.', exchanges: [props.create] });
    }
  },
});
