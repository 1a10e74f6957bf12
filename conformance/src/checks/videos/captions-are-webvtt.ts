import { defineCheck, STATEFUL } from '../../check.ts';
import { at } from '../../implementation/profile.ts';
import { describeDownload, mediaTypeOf } from '../../observe/download.ts';
import { readWebVtt } from '../../observe/webvtt.ts';
import { fail, notApplicable } from '../../outcome.ts';
import { DURATION_TOLERANCE_SECONDS, fetchLinked, fileDuration, videoFile } from '../media.ts';

export default defineCheck({
  id: 'videos.captions-are-webvtt',
  title: 'A ready video\'s captions download as WebVTT timed within the video',
  asserts:
    'Where the implementation profile says video records link to captions (files.captions; under the contract captions_url) and the ready video offers them: GET of the link answers 200 with text/vtt, a WebVTT file (the WEBVTT line, then cues of start --> end, each ending after it starts) with at least one cue, every cue within the video\'s own duration (a quarter second allowed).',
  clauses: [],
  decisions: ['ND-VIDEO-FIELDS'],
  profiles: STATEFUL,
  // The source names no captions: an implementation without them is not wrong.
  notRequiredIn: ['core', 'production'],
  async run(ctx) {
    const pointer = ctx.shape.profile.files.captions;
    if (pointer === null) notApplicable('the implementation profile names no captions (files.captions)');
    const video = await videoFile(ctx);
    const link = at(video.record, pointer);
    // Optional in the contract too: a ready video without captions leaves the member out.
    if (link === undefined || link === null) notApplicable(`the ready video offers no captions at ${pointer}`);
    const file = await fetchLinked(ctx, video, pointer, 'captions link');
    const where = `ready video ${file.job.id!}'s captions (${file.link})`;
    if (!file.fetched.ok) fail({ clause: 'ND-VIDEO-FIELDS', message: `${where} could not be downloaded: ${file.fetched.problem}`, expected: '200 with WebVTT', received: file.fetched.problem, fix: 'Serve the captions at their link once the record says ready.' });
    const answer = file.fetched.download;
    if (answer.status !== 200) fail({ clause: 'ND-VIDEO-FIELDS', message: `${where} answered ${answer.status}`, expected: '200 with WebVTT', received: describeDownload(answer), fix: 'Serve the captions at their link once the record says ready.' });
    // HTML's <track> takes captions served as text/vtt only.
    const type = mediaTypeOf(answer);
    if (type !== 'text/vtt') fail({ clause: 'ND-VIDEO-FIELDS', message: `${where} answered ${type ? `Content-Type ${type}` : 'no Content-Type'}`, expected: 'Content-Type: text/vtt', received: describeDownload(answer), fix: 'Serve WebVTT as text/vtt, the only type a <track> element takes.' });
    let text: string;
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(answer.body);
    } catch {
      fail({ clause: 'ND-VIDEO-FIELDS', message: `${where} is not UTF-8, as WebVTT always is`, expected: 'WebVTT in UTF-8', received: describeDownload(answer), fix: 'Write the captions in UTF-8.' });
    }
    const vtt = readWebVtt(text);
    if (!vtt.ok) fail({ clause: 'ND-VIDEO-FIELDS', message: `${where} is not WebVTT: ${vtt.problem}`, expected: 'WEBVTT, then cues of start --> end', received: describeDownload(answer), fix: 'Write the captions as WebVTT (https://www.w3.org/TR/webvtt1/).' });
    if (vtt.cues.length === 0) fail({ clause: 'ND-VIDEO-FIELDS', message: `${where} holds no cue, though the run's script is spoken`, expected: 'at least one cue', received: describeDownload(answer), fix: 'Caption the script as the video speaks it.' });
    const duration = fileDuration(video.mp4);
    if (duration === null) return;
    const outside = vtt.cues.find((cue) => cue.endSeconds > duration + DURATION_TOLERANCE_SECONDS);
    if (outside) {
      fail({
        clause: 'ND-VIDEO-FIELDS',
        message: `${where} has a cue ending at ${outside.endSeconds} s, after the video's ${duration.toFixed(3)} s`,
        expected: `every cue within the video's ${duration.toFixed(3)} s (${DURATION_TOLERANCE_SECONDS} s allowed)`,
        received: `${outside.startSeconds} --> ${outside.endSeconds}: ${JSON.stringify(outside.text.slice(0, 80))}`,
        fix: 'Time the captions on the video they belong to.',
      });
    }
  },
});
