import { ALL, defineCheck } from '../../check.ts';
import { describe, expectInvalid, validPropsAvatar, without } from '../../expect.ts';
import { fail } from '../../outcome.ts';

export default defineCheck({
  id: 'avatars.props-validated',
  title: 'A props avatar needs ethnicity, sex and age from the allowed values',
  asserts: 'A props avatar missing ethnicity, sex or age, or with an ethnicity or sex outside the listed values, is refused as invalid.',
  clauses: ['AV-PROPS'],
  decisions: ['ND-ERRORS', 'ND-ERROR-BODY'],
  profiles: ALL,
  lane: 'requests',
  async run(ctx) {
    const base = validPropsAvatar();
    for (const member of ['ethnicity', 'sex', 'age']) {
      await expectInvalid(ctx, { clause: 'AV-PROPS', what: `type is props and ${member} is missing`, path: '/v1/avatars', body: without(base, member), field: member });
    }
    await expectInvalid(ctx, { clause: 'AV-PROPS', what: 'ethnicity is "Martian"', path: '/v1/avatars', body: { ...base, ethnicity: 'Martian' }, field: 'ethnicity' });
    await expectInvalid(ctx, { clause: 'AV-PROPS', what: 'sex is "other"', path: '/v1/avatars', body: { ...base, sex: 'other' }, field: 'sex' });

    // Values with spaces are the likeliest to be mistyped by an implementation. Under the
    // contract, validation precedes the credit check, so the key without credits proves
    // acceptance (402) without starting anything.
    if (ctx.contract && ctx.hasKey('empty')) {
      for (const ethnicity of ['South Asian', 'Middle Eastern', 'Wasian']) {
        const exchange = await ctx.http.send({ key: 'empty', method: 'POST', path: '/v1/avatars', json: { ...base, ethnicity }, note: `ethnicity "${ethnicity}" is valid` });
        if (exchange.status !== 402) {
          fail({
            clause: 'AV-PROPS',
            message: `ethnicity "${ethnicity}" was not accepted as valid`,
            expected: '402 insufficient_credits (valid, refused only for credits)',
            received: describe(exchange),
            fix: 'Accept all eight ethnicity values exactly as listed: Asian, South Asian, Southeast Asian, Black, Hispanic, Middle Eastern, White, Wasian.',
            exchanges: [exchange],
          });
        }
      }
    }
  },
});
