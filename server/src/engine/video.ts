// Renders a video of the built-in engine: the avatar's portrait speaking the script, with
// the script as captions, in the frame the video asked for. Runs in a render process of
// its own (videoProcess.ts). The pictures are drawn once (scene.ts), the speech made once
// (speech.ts), and FFmpeg (ffmpeg.ts) puts them together frame by frame: it moves the
// portrait, switches its mouth (mouthCommands) and the captions (concatList) when the
// timeline says, and encodes H.264 and AAC into an MP4 that starts playing before it is
// all downloaded.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import type { AvatarInput, VideoInput } from '../domain/model.ts';
import { encodeTimeoutMs, runFfmpeg } from './ffmpeg.ts';
import { avatarSeed } from './portrait.ts';
import { backdropPng, captionArea, captionPng, createMeasure, LAYOUTS, portraitPng } from './scene.ts';
import { SPEECH_SAMPLE_RATE, speakCues, type Voice } from './speech.ts';
import { captionCues, mouthFrames, VIDEO_FPS, videoFrames, WORDS_PER_SECOND, type Mouth } from './timeline.ts';

export interface VideoRequest {
  /** The inputs of the video's avatar: whose portrait speaks. */
  avatar: AvatarInput;
  video: VideoInput;
}

/** Caption pictures drawn between two collections of the render process's garbage. */
const CAPTIONS_PER_COLLECTION = 16;
/** x264's quantiser of the picture (see the encoder's arguments). */
const VIDEO_QP = 15;
/** Samples of an AAC frame: the audio track's length is counted in these. */
const AAC_FRAME_SAMPLES = 1024;
/** Speech runs a little faster than the captions, so each caption's words end before the next shows. */
const SPEECH_PACE = 1.1;

/** A voice for the avatar: a props avatar's sex chooses it, any other avatar's inputs do. */
export function voiceFor(avatar: AvatarInput): Voice {
  const female = avatar.sex ? avatar.sex === 'female' : createHash('sha256').update(avatarSeed(avatar)).digest()[0]! % 2 === 0;
  return { name: female ? 'en-us+f3' : 'en-us+m3', wordsPerMinute: Math.round(WORDS_PER_SECOND * 60 * SPEECH_PACE) };
}

/**
 * Samples of audio the video can hold: whole AAC frames, one fewer than would fill it, so
 * that the audio track, priming frame included, never outlasts the picture and the file's
 * duration is the picture's (what `duration_seconds` says).
 */
export function audioSamples(frames: number): number {
  const fit = Math.floor((frames / VIDEO_FPS) * SPEECH_SAMPLE_RATE / AAC_FRAME_SAMPLES) - 1;
  return Math.max(0, fit) * AAC_FRAME_SAMPLES;
}

/** The three portraits, in the order of FFmpeg's inputs 1 to 3 and of the mouth selector's inputs. */
const MOUTHS: readonly Mouth[] = ['rest', 'open', 'round'];

/**
 * The commands (FFmpeg's sendcmd) that switch the portrait's mouth: at the first frame of
 * each run of one mouth, the selector takes that mouth's input. The first run's mouth is
 * the selector's own starting choice.
 */
function mouthCommands(mouths: Mouth[]): string {
  const lines: string[] = [];
  let frame = 0;
  for (const [mouth, n] of runsOf(mouths)) {
    if (frame > 0) lines.push(`${(frame / VIDEO_FPS).toFixed(2)} streamselect@mouth map ${MOUTHS.indexOf(mouth)};`);
    frame += n;
  }
  // sendcmd refuses a file without a command: a script with no words never moves the
  // mouth, so it gets one that keeps the mouth it starts with.
  if (lines.length === 0) lines.push(`0.00 streamselect@mouth map ${MOUTHS.indexOf(mouths[0] ?? 'rest')};`);
  return `${lines.join('\n')}\n`;
}

/** The concat demuxer's list that shows each file for its run of frames (`runs`: [file, frames] pairs). */
function concatList(runs: [string, number][]): string {
  const lines = runs.flatMap(([file, frames]) => [`file '${file}'`, `duration ${(frames / VIDEO_FPS).toFixed(2)}`]);
  // The concat demuxer takes the last file's duration only if the file is listed again.
  return `${[...lines, `file '${runs.at(-1)![0]}'`].join('\n')}\n`;
}

/** Runs of equal values, as [value, count] pairs. */
function runsOf<T>(values: T[]): [T, number][] {
  const runs: [T, number][] = [];
  for (const v of values) {
    const last = runs.at(-1);
    if (last && last[0] === v) last[1]++;
    else runs.push([v, 1]);
  }
  return runs;
}

/** ffmpeg's atempo takes 0.5 to 2 per filter: a larger speed-up is a chain of them (at most 4x; longer speech is cut). */
function tempoFilters(speedUp: number): string[] {
  const filters: string[] = [];
  let left = Math.min(4, speedUp);
  while (left > 1.0001) {
    const step = Math.min(2, left);
    filters.push(`atempo=${step.toFixed(6)}`);
    left /= step;
  }
  return filters;
}

/** The MP4 of a video: same inputs, same bytes. */
export async function renderVideo(request: VideoRequest, signal?: AbortSignal): Promise<Uint8Array> {
  const dir = await mkdtemp(join(tmpdir(), 'avatar-video-out-'));
  try {
    await renderVideoFile(request, join(dir, 'video.mp4'), signal);
    return await readFile(join(dir, 'video.mp4'));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * Renders the MP4 of a video into the file `out` (an absolute path), never holding it in
 * memory: what the job runner keeps is read from there. What it draws and speaks on the
 * way is kept in a folder made in `scratch` (the system's temporary folder by default;
 * the render's own folder in a render process, which a start-up sweep removes should the
 * process be killed).
 */
export async function renderVideoFile({ avatar, video }: VideoRequest, out: string, signal?: AbortSignal, scratch = tmpdir()): Promise<void> {
  const layout = LAYOUTS[video.aspect_ratio];
  const frames = videoFrames(video.script);
  const cues = captionCues(video.script);
  const mouths = mouthFrames(video.script);
  const dir = await mkdtemp(join(scratch, 'avatar-video-'));
  try {
    const measure = createMeasure();
    const files: [string, Uint8Array | string][] = [
      ['backdrop.png', backdropPng(layout, avatar)],
      ['rest.png', portraitPng(layout, avatar)],
      ['open.png', portraitPng(layout, avatar, 'open')],
      ['round.png', portraitPng(layout, avatar, 'round')],
      ['blank.png', captionPng(layout, '', measure)],
    ];
    // Each caption's picture is written as it is drawn: a long script has hundreds. The
    // drawing library's memory is native and freed only when V8 collects its objects,
    // which a small JS heap seldom does: the render process (started with --expose-gc)
    // collects every few captions, which halves its peak on the longest script.
    const collect = (globalThis as { gc?: () => void }).gc;
    for (const [i, cue] of cues.entries()) {
      await writeFile(join(dir, `caption-${i}.png`), captionPng(layout, cue.text, measure));
      if (i % CAPTIONS_PER_COLLECTION === CAPTIONS_PER_COLLECTION - 1) collect?.();
    }
    const captionRuns: [string, number][] = cues.length > 0 ? cues.map((cue, i) => [`caption-${i}.png`, cue.end - cue.start]) : [['blank.png', frames]];
    files.push(['mouths.cmd', mouthCommands(mouths)], ['captions.txt', concatList(captionRuns)]);

    const samples = audioSamples(frames);
    const speech = await speakCues(
      cues.map((cue) => ({ text: cue.text, startSample: Math.round((cue.start / VIDEO_FPS) * SPEECH_SAMPLE_RATE) })),
      voiceFor(avatar),
    );
    // A script with nothing to say still has a (silent) sound track: FFmpeg needs one sample to pad.
    const sound = speech.length > 0 ? speech : new Int16Array(1);
    files.push(['speech.raw', new Uint8Array(sound.buffer, sound.byteOffset, sound.byteLength)]);
    await Promise.all(files.map(([name, data]) => writeFile(join(dir, name), data)));

    const { portrait: p, caption } = layout;
    const captions = captionArea(layout);
    const x = `${p.cx - p.size / 2}+${p.swayX}*sin(2*PI*t/3.1)`;
    const y = `${p.cy - p.size / 2}+${p.bobY}*sin(2*PI*t/2.3)`;
    // Each picture is decoded and converted to the encoder's colours once, then repeated;
    // a picture shown again by a concat list is decoded and converted again each time it
    // shows, which for the mouth (hundreds of switches in 30 s) was a third of the render.
    const still = (input: number, pixels: string) => `[${input}:v]format=${pixels},loop=loop=${frames - 1}:size=1:start=0,setpts=N/${VIDEO_FPS}/TB`;
    const audio = [...tempoFilters(speech.length / Math.max(1, samples)), `apad=whole_len=${samples}`, `atrim=end_sample=${samples}`].join(',');
    await runFfmpeg(
      [
        // The filters on one thread, as the encoder: their work per frame is small (two
        // overlays), and handing each frame's slices to other threads cost more CPU than
        // it saved, some 9% of the encoder's, for the same bytes.
        '-filter_complex_threads', '1', '-filter_threads', '1',
        '-i', 'backdrop.png',
        ...MOUTHS.flatMap((mouth) => ['-i', `${mouth}.png`]),
        '-f', 'concat', '-safe', '0', '-i', 'captions.txt',
        '-f', 's16le', '-ar', String(SPEECH_SAMPLE_RATE), '-ac', '1', '-i', 'speech.raw',
        '-filter_complex',
        // Colour conversions in their exact C form rather than the processor's SIMD, whose
        // rounding may differ between machines: API processes on other hardware then still
        // make the same bytes (x264 is exact on every processor by design).
        // The mouth's selector takes one of the three portraits' streams as the commands
        // (mouths.cmd) say, read as the first stream's frames pass.
        `sws_flags=bitexact+accurate_rnd+full_chroma_int;${still(0, 'yuv420p')}[bg];` +
          `${still(1, 'yuva420p')},sendcmd=f=mouths.cmd[rest];${still(2, 'yuva420p')}[open];${still(3, 'yuva420p')}[round];` +
          `[rest][open][round]streamselect@mouth=inputs=3:map=${MOUTHS.indexOf(mouths[0] ?? 'rest')}[portrait];` +
          `[bg][portrait]overlay=x='${x}':y='${y}'[talking];` +
          `[talking][4:v]overlay=x=${captions.x}:y=${caption.top + captions.y}:eof_action=repeat,format=yuv420p[v];` +
          `[5:a]${audio}[a]`,
        '-map', '[v]', '-map', '[a]',
        '-frames:v', String(frames), '-r', String(VIDEO_FPS),
        // x264's fastest preset: flat drawings need none of the slower ones' tools (its
        // Constrained Baseline plays anywhere). A constant quantiser rather than a quality
        // target (CRF 24 before), whose rate control costs a fifth of the encoder's time: 15
        // is what CRF 24 chose for these pictures (12 on key frames, 15 on the others), for
        // nearly the same size (1.66 against 1.62 MB for 30 s of 720x1280; the longest
        // script's 41 against 35.6 MB) and fidelity (58 dB of PSNR against the pictures
        // encoded losslessly, either way). No trellis quantisation,
        // which FFmpeg's x264 set-up turns on though the preset has it off: another fifth,
        // for 1% of the size. One thread: two spend some 15% more CPU on the same frames,
        // and the engine renders two videos at once to keep two cores busy. The thread count
        // is fixed: x264's output depends on it, and the file must not depend on the machine.
        // No look-ahead thread either (sync-lookahead): a constant quantiser with no B-frames
        // has nothing to look ahead for, and the file is the same without it.
        '-c:v', 'libx264', '-preset', 'ultrafast', '-qp', String(VIDEO_QP), '-x264-params', 'trellis=0:sync-lookahead=0', '-pix_fmt', 'yuv420p', '-g', String(2 * VIDEO_FPS), '-threads', '1',
        '-c:a', 'aac', '-b:a', '48k', '-flags:a', '+bitexact',
        '-movflags', '+faststart', '-map_metadata', '-1', '-fflags', '+bitexact',
        out,
      ],
      dir,
      signal,
      encodeTimeoutMs(frames),
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
