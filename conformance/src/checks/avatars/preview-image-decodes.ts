import { defineCheck, STATEFUL } from '../../check.ts';
import { at } from '../../implementation/profile.ts';
import { describeDownload, mediaTypeOf } from '../../observe/download.ts';
import { readImage } from '../../observe/image.ts';
import { fail, notApplicable } from '../../outcome.ts';
import { avatarRecord, fetchLinked } from '../media.ts';

const MEDIA_TYPES = { png: 'image/png', jpeg: 'image/jpeg' } as const;

export default defineCheck({
  id: 'avatars.preview-image-decodes',
  title: 'A ready avatar\'s preview downloads as a PNG or JPEG image',
  asserts:
    'Where the implementation profile says avatar records link to a preview (files.preview; under the contract preview_image_url): the ready avatar has the link, and GET of it answers 200 with image/png or image/jpeg and bytes of that format whose header states a width and a height (a PNG\'s IHDR, a JPEG\'s start of frame).',
  clauses: [],
  decisions: ['ND-AVATAR-FIELDS'],
  profiles: STATEFUL,
  // The source names no preview: an implementation without one is not wrong.
  notRequiredIn: ['core', 'production'],
  async run(ctx) {
    const pointer = ctx.shape.profile.files.preview;
    if (pointer === null) notApplicable('the implementation profile names no preview image (files.preview)');
    const avatar = await avatarRecord(ctx);
    const link = at(avatar.record, pointer);
    if (typeof link !== 'string' || link === '') {
      fail({ clause: 'ND-AVATAR-FIELDS', message: `ready avatar ${avatar.job.id!} has no preview link at ${pointer}`, expected: `${pointer}: a URL`, received: `${pointer}: ${JSON.stringify(link) ?? 'absent'}`, fix: 'Set the preview link once the avatar is ready.' });
    }
    const file = await fetchLinked(ctx, avatar, pointer, 'preview link');
    const where = `ready avatar ${file.job.id!}'s preview (${file.link})`;
    if (!file.fetched.ok) fail({ clause: 'ND-AVATAR-FIELDS', message: `${where} could not be downloaded: ${file.fetched.problem}`, expected: '200 with a PNG or JPEG', received: file.fetched.problem, fix: 'Serve the preview at its link once the avatar is ready.' });
    const answer = file.fetched.download;
    if (answer.status !== 200) fail({ clause: 'ND-AVATAR-FIELDS', message: `${where} answered ${answer.status}`, expected: '200 with a PNG or JPEG', received: describeDownload(answer), fix: 'Serve the preview at its link once the avatar is ready.' });
    const image = readImage(answer.body);
    if (!image.ok) fail({ clause: 'ND-AVATAR-FIELDS', message: `${where} is no image: ${image.problem}`, expected: 'a PNG or a JPEG', received: describeDownload(answer), fix: 'Serve the preview as a PNG or a JPEG.' });
    const type = mediaTypeOf(answer);
    const wanted = MEDIA_TYPES[image.info.format];
    if (type !== wanted) {
      fail({ clause: 'ND-AVATAR-FIELDS', message: `${where} is a ${image.info.format.toUpperCase()} served as ${type || 'no Content-Type'}`, expected: `Content-Type: ${wanted}`, received: describeDownload(answer), fix: `Serve the preview with its own media type, ${wanted}.` });
    }
  },
});
