// Writes the pictures of the built-in engine's media that the getting-started guide
// (docs/getting-started.md) shows, made by the engine itself: an avatar's preview, and a
// frame of a video of that avatar in each of two frames (9:16 and 16:9), taken from the
// MP4 with the FFmpeg the engine encodes with.
// The same inputs give the same files, so running it again changes nothing.
//
//   npm run media:samples                 # into docs/media/
//   npm run media:samples -- --out <dir>
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { AvatarInput, VideoInput } from '../server/src/domain/model.ts';
import { runFfmpeg } from '../server/src/engine/ffmpeg.ts';
import renderPortrait from '../server/src/engine/portraitWorker.ts';
import { captionCues, VIDEO_FPS } from '../server/src/engine/timeline.ts';
import { renderVideo } from '../server/src/engine/video.ts';
import { answerHelp, parseOrExit } from './help.ts';

const ROOT = resolve(import.meta.dirname, '..');
export const DEFAULT_OUT = join(ROOT, 'docs', 'media');

/** The README's own example: the props avatar of its first curl, and the contract's example script. */
export const SAMPLE_AVATAR: AvatarInput = { type: 'props', name: 'Fitness coach', ethnicity: 'Hispanic', sex: 'male', age: 34 };
export const SAMPLE_SCRIPT = 'Three weeks with this serum and my skin has never looked better. Here is my morning routine.';

/** Where the frame is taken: midway through the second caption. */
function frameSeconds(script: string): number {
  const cue = captionCues(script)[1] ?? captionCues(script)[0]!;
  return Math.floor((cue.start + cue.end) / 2) / VIDEO_FPS;
}

export async function writeMediaSamples(outDir: string = DEFAULT_OUT): Promise<string[]> {
  await mkdir(outDir, { recursive: true });
  const written: string[] = [];
  const preview = join(outDir, 'preview.png');
  await writeFile(preview, renderPortrait(SAMPLE_AVATAR));
  written.push(preview);

  const scratch = await mkdtemp(join(tmpdir(), 'media-samples-'));
  try {
    for (const aspectRatio of ['9:16', '16:9'] as const) {
      const video: VideoInput = { avatar_id: 'av_sample', script: SAMPLE_SCRIPT, aspect_ratio: aspectRatio };
      await writeFile(join(scratch, 'video.mp4'), await renderVideo({ avatar: SAMPLE_AVATAR, video }));
      const frame = join(outDir, `video-frame-${aspectRatio.replace(':', 'x')}.png`);
      await runFfmpeg(['-y', '-ss', frameSeconds(SAMPLE_SCRIPT).toFixed(2), '-i', 'video.mp4', '-frames:v', '1', '-fflags', '+bitexact', '-flags:v', '+bitexact', resolve(frame)], scratch, undefined, 60_000);
      written.push(frame);
    }
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
  return written;
}

if (import.meta.main) {
  answerHelp(`Usage: npm run media:samples [-- --out <dir>]

Writes the pictures the docs show of the built-in engine's media, made by the engine
itself: an avatar's preview and a frame of a video of it in 9:16 and 16:9, into <dir>
(default docs/media). The same inputs give the same files.`);
  const { values } = parseOrExit('media:samples', () => parseArgs({ options: { out: { type: 'string' } } }));
  const files = await writeMediaSamples(values.out ? resolve(values.out) : DEFAULT_OUT);
  for (const file of files) console.log(`wrote ${relative(process.cwd(), file)}`);
}
