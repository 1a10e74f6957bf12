import { defineCheck, STATEFUL } from '../../check.ts';
import { at } from '../../implementation/profile.ts';
import { describeDownload, mediaTypeOf, MAX_FILE_BYTES } from '../../observe/download.ts';
import { fail } from '../../outcome.ts';
import { DURATION_TOLERANCE_SECONDS, fileDuration, videoFile } from '../media.ts';

export default defineCheck({
  id: 'videos.ready-url-serves-mp4',
  title: 'A ready video\'s video_url downloads an MP4 with picture and sound',
  asserts:
    'GET of a ready video\'s video_url (redirects followed, relative links resolved) answers 200 with a video/* media type and bytes that are an MP4 (an ISO BMFF ftyp, then a moov with a video track and, the run\'s script being spoken, an audio track); where the implementation profile says the record states its length (files.duration; under the contract duration_seconds), the file\'s own duration agrees with it within a quarter second.',
  clauses: ['VID-READY-URL'],
  decisions: ['ND-VIDEO-FIELDS'],
  profiles: STATEFUL,
  async run(ctx) {
    const file = await videoFile(ctx);
    const where = `ready video ${file.job.id!}'s video_url (${file.link})`;
    if (!file.fetched.ok) {
      const hops = file.fetched.hops.map((hop) => `${hop.url} -> ${hop.status} ${hop.location ?? ''}`).join('\n');
      fail({ clause: 'VID-READY-URL', message: `${where} could not be downloaded: ${file.fetched.problem}`, expected: 'GET answers 200 with the video', received: [file.fetched.problem, hops].filter(Boolean).join('\n'), fix: 'Serve the finished video at video_url once the record says ready (a redirect to storage is fine).' });
    }
    const answer = file.fetched.download;
    const evidence = [describeDownload(answer)];
    if (answer.status !== 200) {
      fail({ clause: 'VID-READY-URL', message: `${where} answered ${answer.status}`, expected: '200 with the video', received: describeDownload(answer), fix: 'Make the file available at video_url before the record says ready, and keep it there.' });
    }
    const type = mediaTypeOf(answer);
    if (!type.startsWith('video/')) {
      fail({ clause: 'VID-READY-URL', message: `${where} answered ${type ? `Content-Type ${type}` : 'no Content-Type'}, not a video`, expected: 'Content-Type video/* (video/mp4)', received: describeDownload(answer), fix: 'Serve the video with its media type, video/mp4.' });
    }
    if (answer.cut) {
      fail({ clause: 'VID-READY-URL', message: `${where} is longer than the ${MAX_FILE_BYTES / 1024 / 1024} MiB the runner reads of a video of a few seconds`, expected: `an MP4 of the run's short script, under ${MAX_FILE_BYTES} bytes`, received: describeDownload(answer), fix: 'Serve the video itself, encoded at a usual bitrate.' });
    }
    const mp4 = file.mp4;
    if (!mp4?.ok) {
      fail({ clause: 'VID-READY-URL', message: `${where} is not an MP4: ${mp4?.problem ?? 'not read'}`, expected: 'an ISO base media file: ftyp, then moov with its tracks', received: describeDownload(answer), fix: 'Serve the rendered MP4 at video_url, not another file.' });
    }
    const handlers = mp4.info.tracks.map((track) => track.handler);
    for (const [handler, what] of [['vide', 'a video track'], ['soun', 'an audio track (the run\'s script is spoken)']] as const) {
      if (!handlers.includes(handler)) {
        fail({ clause: 'VID-READY-URL', message: `${where} is an MP4 without ${what}: its tracks' handlers are ${handlers.join(', ') || 'none'}`, expected: `a track whose hdlr is '${handler}'`, received: `tracks: ${handlers.join(', ') || 'none'}; top-level boxes: ${mp4.info.topLevel.join(', ')}`, fix: 'Render the avatar speaking the script: picture and sound.', evidence });
      }
    }

    const pointer = ctx.shape.profile.files.duration;
    if (pointer === null) return;
    const stated = at(file.record, pointer);
    const own = fileDuration(mp4);
    if (typeof stated !== 'number' || !Number.isFinite(stated)) {
      fail({ clause: 'ND-VIDEO-FIELDS', message: `ready video ${file.job.id!} states no length at ${pointer}`, expected: `${pointer}: the video's length in seconds`, received: `${pointer}: ${JSON.stringify(stated) ?? 'absent'}`, fix: 'State the finished video\'s length on the ready record.' });
    }
    if (own === null) {
      fail({ clause: 'ND-VIDEO-FIELDS', message: `${where} states no duration (mvhd, mehd or any track's mdhd) to agree with the record's ${stated} s`, expected: 'an MP4 that states its duration', received: `tracks: ${handlers.join(', ')}`, fix: 'Write the duration into the MP4\'s movie header.', evidence });
    }
    if (Math.abs(own - stated) > DURATION_TOLERANCE_SECONDS) {
      fail({
        clause: 'ND-VIDEO-FIELDS',
        message: `ready video ${file.job.id!} states ${stated} s at ${pointer}, but its MP4 lasts ${own.toFixed(3)} s`,
        expected: `${pointer} within ${DURATION_TOLERANCE_SECONDS} s of the file's own duration, ${own.toFixed(3)} s`,
        received: `${pointer}: ${stated}`,
        fix: 'State the length of the file served, read from the file itself.',
        evidence,
      });
    }
  },
});
