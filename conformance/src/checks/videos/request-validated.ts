import { CONTRACT_ONLY, defineCheck } from '../../check.ts';
import { expectInvalid } from '../../expect.ts';

// A well-formed avatar ID that belongs to nobody: validation comes before the lookup
// (ND-ERRORS: request, then resources), so each case must answer 422, not 404.
const base = { avatar_id: 'av_000000000000000000000000', script: 'Hello from the conformance runner.' };

export default defineCheck({
  id: 'videos.request-validated',
  title: 'Video requests are validated before the avatar is looked up',
  asserts: 'Contract only: a video request missing avatar_id or script, with an empty script, an unknown member or a bad aspect_ratio is refused with 422 naming the field.',
  clauses: [],
  decisions: ['ND-VIDEO-REQUEST', 'ND-ERRORS', 'ND-ERROR-BODY'],
  profiles: CONTRACT_ONLY,
  lane: 'requests',
  async run(ctx) {
    const cases: [string, Record<string, unknown>, string][] = [
      ['avatar_id is missing', { script: base.script }, 'avatar_id'],
      ['script is missing', { avatar_id: base.avatar_id }, 'script'],
      ['script is empty', { ...base, script: '' }, 'script'],
      ['an unknown member "scirpt" is sent', { ...base, scirpt: 'typo' }, 'scirpt'],
      ['aspect_ratio is "4:3"', { ...base, aspect_ratio: '4:3' }, 'aspect_ratio'],
    ];
    for (const [what, body, field] of cases) {
      await expectInvalid(ctx, { clause: 'ND-VIDEO-REQUEST', what, path: '/v1/avatar-videos', body, field });
    }
  },
});
