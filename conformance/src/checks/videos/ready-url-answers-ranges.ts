import { defineCheck, STATEFUL } from '../../check.ts';
import { describeDownload, firstBytes, type Download } from '../../observe/download.ts';
import { fail, PrerequisiteError } from '../../outcome.ts';
import { fetchAgain, videoFile } from '../media.ts';

/** The range asked for: the first 100 bytes, what a player reads first of an MP4. */
const RANGE_LAST_BYTE = 99;

export default defineCheck({
  id: 'videos.ready-url-answers-ranges',
  title: 'A ready video\'s video_url answers a byte range with exactly those bytes',
  asserts:
    'GET of a ready video\'s video_url with Range: bytes=0-99 answers 206 with exactly the file\'s first 100 bytes and Content-Range: bytes 0-99/<size> (RFC 9110, section 14), or 200 with the whole file where the implementation profile claims no ranges (files.ranges; the contract claims them); where the whole file came with a strong ETag, the same range with an If-Range naming another tag answers the whole file (RFC 9110, section 13.1.5).',
  clauses: ['VID-READY-URL'],
  decisions: ['ND-VIDEO-FIELDS'],
  profiles: STATEFUL,
  async run(ctx) {
    const file = await videoFile(ctx);
    if (!file.fetched.ok || file.fetched.download.status !== 200 || file.fetched.download.cut) {
      throw new PrerequisiteError('the whole video could not be downloaded to compare a range with (videos.ready-url-serves-mp4 says why)');
    }
    const whole = file.fetched.download;
    const size = whole.body.byteLength;
    if (size === 0) throw new PrerequisiteError('the video is empty: no range to ask for (videos.ready-url-serves-mp4 says why)');
    const claimed = ctx.shape.profile.files.ranges;
    // A claim of ranges is the implementation's decision; a range answered wrongly is a link that does not give the file.
    const clause = claimed ? 'ND-VIDEO-FIELDS' : 'VID-READY-URL';
    const where = `ready video ${file.job.id!}'s video_url`;
    const last = Math.min(RANGE_LAST_BYTE, size - 1);
    const expected = whole.body.subarray(0, last + 1);

    const ranged = await fetchAgain(ctx, file, { range: `bytes=0-${RANGE_LAST_BYTE}` });
    if (!ranged.ok) fail({ clause, message: `${where} asked for bytes 0-${RANGE_LAST_BYTE} could not be downloaded: ${ranged.problem}`, expected: `206 with bytes 0-${last}`, received: ranged.problem, fix: 'Answer a Range request as any GET of the file.' });
    const answer = ranged.download;
    if (answer.status === 200 && !claimed) {
      sameAsWhole(answer, whole, clause, `${where} answered a Range request with 200`);
      return;
    }
    if (answer.status !== 206) {
      fail({
        clause,
        message: `${where} answered Range: bytes=0-${RANGE_LAST_BYTE} with ${answer.status}`,
        expected: claimed ? `206 Partial Content with bytes 0-${last} (the implementation profile claims ranges)` : `206 with bytes 0-${last}, or 200 with the whole file`,
        received: describeDownload(answer),
        fix: 'Answer a single byte range with 206, Content-Range and exactly those bytes, as video players ask (RFC 9110, section 14).',
      });
    }
    const contentRange = answer.headers['content-range'] ?? '';
    const wanted = `bytes 0-${last}/${size}`;
    if (contentRange.trim() !== wanted) {
      fail({ clause, message: `${where} answered 206 with Content-Range ${JSON.stringify(contentRange)}`, expected: `Content-Range: ${wanted}`, received: describeDownload(answer), fix: 'Say in Content-Range the bytes sent and the whole size (RFC 9110, section 14.4).' });
    }
    if (!equal(answer.body, expected)) {
      fail({ clause, message: `${where} answered 206 with other bytes than the file's first ${last + 1}`, expected: `the file's bytes 0-${last}: ${firstBytes(expected)}`, received: describeDownload(answer), fix: 'Send exactly the bytes the range names, from the same file a whole GET gives.' });
    }

    // If-Range is judged only where a strong validator was given: a weak one never lets a range through, and without one there is nothing to name.
    const etag = whole.headers.etag?.trim();
    if (!etag || !etag.startsWith('"')) return;
    const other = `"${etag.slice(1, -1)}-not-this-file"`;
    const conditional = await fetchAgain(ctx, file, { range: `bytes=0-${RANGE_LAST_BYTE}`, 'if-range': other });
    if (!conditional.ok) fail({ clause, message: `${where} asked for a range with If-Range: ${other} could not be downloaded: ${conditional.problem}`, expected: '200 with the whole file', received: conditional.problem, fix: 'Answer a conditional range request as any GET of the file.' });
    if (conditional.download.status !== 200) {
      fail({
        clause,
        message: `${where} answered a range whose If-Range names another entity tag with ${conditional.download.status}, not the whole file`,
        expected: `200 with the whole file: If-Range ${other} does not match the file's ETag ${etag} (RFC 9110, section 13.1.5)`,
        received: describeDownload(conditional.download),
        fix: 'Ignore Range when If-Range does not name the file\'s current strong ETag, and send the whole file.',
      });
    }
    sameAsWhole(conditional.download, whole, clause, `${where} answered a range whose If-Range names another entity tag with 200`);
  },
});

function sameAsWhole(answer: Download, whole: Download, clause: 'ND-VIDEO-FIELDS' | 'VID-READY-URL', what: string): void {
  if (answer.cut || !equal(answer.body, whole.body)) {
    fail({ clause, message: `${what}, but not with the whole file: ${answer.body.byteLength} bytes where GET gave ${whole.body.byteLength}`, expected: `the whole file, ${whole.body.byteLength} bytes: ${firstBytes(whole.body)}`, received: describeDownload(answer), fix: 'A 200 carries the whole file, the same bytes as any other GET of it.' });
  }
}

function equal(a: Uint8Array, b: Uint8Array): boolean {
  return a.byteLength === b.byteLength && Buffer.compare(a, b) === 0;
}
