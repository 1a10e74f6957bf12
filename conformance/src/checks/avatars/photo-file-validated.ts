import { ALL, defineCheck } from '../../check.ts';
import { expectInvalid } from '../../expect.ts';

const photo = (file: unknown) => ({ type: 'photo', name: 'Conformance validation', ...(file === undefined ? {} : { file }) });
const PORTRAIT = 'https://images.example.com/portraits/never-fetched.jpg';

export default defineCheck({
  id: 'avatars.photo-file-validated',
  title: 'A photo avatar needs file = {type: "url", url}',
  asserts: 'A photo avatar without file, with a file.type other than url, or without file.url is refused as invalid.',
  clauses: ['AV-PHOTO'],
  decisions: ['ND-ERRORS', 'ND-ERROR-BODY'],
  profiles: ALL,
  lane: 'requests',
  async run(ctx) {
    const cases: [string, unknown, string][] = [
      ['type is photo and file is missing', undefined, 'file'],
      ['file is a string, not an object', PORTRAIT, 'file'],
      ['file.type is "upload"', { type: 'upload', url: PORTRAIT }, 'file.type'],
      ['file.type is missing', { url: PORTRAIT }, 'file.type'],
      ['file.url is missing', { type: 'url' }, 'file.url'],
    ];
    if (ctx.contract) cases.push(['file.url is not a URL', { type: 'url', url: 'portrait.jpg' }, 'file.url']);
    for (const [what, file, field] of cases) {
      await expectInvalid(ctx, { clause: 'AV-PHOTO', what, path: '/v1/avatars', body: photo(file), field });
    }
  },
});
