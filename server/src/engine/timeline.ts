// A video's timeline, from its script alone: how long it is, which words are captioned
// when, and when the mouth is open. Pure and cheap, so the job runner states a video's
// duration without rendering it, the files route writes its captions without the
// encoder, and the renderer (video.ts) draws exactly the same cues into the frames.
import type { VideoInput } from '../domain/model.ts';

/** Speaking pace of the built-in engine: a video lasts its words divided by this. */
export const WORDS_PER_SECOND = 2.5;
/**
 * Frames per second of every video. 25 makes each frame 40 ms: a whole number of
 * milliseconds, so a caption's WebVTT time is exactly a frame boundary.
 */
export const VIDEO_FPS = 25;
/** The shortest video, in frames (one second): a one-word script still gets a clip you can see. */
const MIN_FRAMES = VIDEO_FPS;

/** Pixels of the frame for each aspect ratio (720p: what a phone or a page plays). */
export const VIDEO_SIZE: Record<VideoInput['aspect_ratio'], { width: number; height: number }> = {
  '9:16': { width: 720, height: 1280 },
  '16:9': { width: 1280, height: 720 },
  '1:1': { width: 720, height: 720 },
};

/** A caption on screen from frame `start` up to, not including, frame `end`. */
export interface Cue {
  start: number;
  end: number;
  text: string;
}

/** Words of a caption at most, and characters: two lines of the frame's text at most. */
const CUE_MAX_WORDS = 7;
const CUE_MAX_CHARS = 42;
/** A cue ends after a clause once it has this many words. */
const CUE_MIN_WORDS_AT_CLAUSE = 3;

/** The script's words: what is between white space. */
export function scriptWords(script: string): string[] {
  return script.split(/\s+/u).filter((w) => w.length > 0);
}

/** The frame at which word `i` starts being said. */
const wordFrame = (i: number) => Math.round((i / WORDS_PER_SECOND) * VIDEO_FPS);

/** Frames of the video of this script: its words at WORDS_PER_SECOND, one second at least. */
export function videoFrames(script: string): number {
  return Math.max(MIN_FRAMES, wordFrame(scriptWords(script).length));
}

/** The video's length in seconds, exact to the frame: what the record's duration_seconds says. */
export function videoDurationSeconds(script: string): number {
  return videoFrames(script) / VIDEO_FPS;
}

/**
 * The script cut into captions: a cue ends at the end of a sentence, after a clause once
 * it is long enough, or before it would pass CUE_MAX_WORDS or CUE_MAX_CHARS. Each cue
 * lasts from its first word's frame to the next cue's; the last runs to the end.
 */
export function captionCues(script: string): Cue[] {
  const words = scriptWords(script);
  const frames = videoFrames(script);
  const groups: { first: number; words: string[] }[] = [];
  let current: { first: number; words: string[] } | undefined;
  words.forEach((word, i) => {
    const length = current ? current.words.join(' ').length + 1 + word.length : word.length;
    if (!current || current.words.length >= CUE_MAX_WORDS || length > CUE_MAX_CHARS) {
      current = { first: i, words: [] };
      groups.push(current);
    }
    current.words.push(word);
    const n = current.words.length;
    if (/[.!?…]["'”’)]*$/u.test(word) || (n >= CUE_MIN_WORDS_AT_CLAUSE && /[,;:—–]["'”’)]*$/u.test(word))) current = undefined;
  });
  return groups.map((g, k) => ({
    start: wordFrame(g.first),
    end: k + 1 < groups.length ? wordFrame(groups[k + 1]!.first) : frames,
    text: g.words.join(' '),
  }));
}

/** A frame number as a WebVTT time, HH:MM:SS.mmm. */
export function vttTime(frame: number): string {
  const ms = Math.round((frame * 1000) / VIDEO_FPS);
  const hh = Math.floor(ms / 3_600_000);
  const mm = Math.floor(ms / 60_000) % 60;
  const ss = Math.floor(ms / 1000) % 60;
  const pad = (n: number, width = 2) => String(n).padStart(width, '0');
  return `${pad(hh)}:${pad(mm)}:${pad(ss)}.${pad(ms % 1000, 3)}`;
}

/**
 * The cues as a WebVTT file. Cue text escapes `&`, `<` and `>`, which also breaks any
 * `-->` a script holds (a cue's text may not contain it).
 */
export function webVtt(script: string): string {
  const escape = (s: string) => s.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
  const cues = captionCues(script).map((c, i) => `${i + 1}\n${vttTime(c.start)} --> ${vttTime(c.end)}\n${escape(c.text)}\n`);
  return ['WEBVTT\n', ...cues].join('\n');
}

/** The mouth in a frame: at rest (the portrait's own), open, or rounded (an "o"). */
export type Mouth = 'rest' | 'open' | 'round';

/**
 * The mouth of every frame: each word's time is shared among its syllables (groups of
 * vowels, one to four), each open for the first part of its share, rounded when its
 * vowel is an o or a u; at rest between them and after the last word.
 */
export function mouthFrames(script: string): Mouth[] {
  const words = scriptWords(script);
  const mouths = new Array<Mouth>(videoFrames(script)).fill('rest');
  words.forEach((word, i) => {
    const from = wordFrame(i);
    const to = wordFrame(i + 1);
    const vowels = word.toLowerCase().match(/[aeiouy]+/gu) ?? ['a'];
    const syllables = vowels.slice(0, 4);
    const share = (to - from) / syllables.length;
    syllables.forEach((vowel, s) => {
      const open = /^[ou]/u.test(vowel) ? 'round' : 'open';
      const start = Math.round(from + s * share);
      const stop = Math.max(start + 1, Math.round(from + s * share + share * 0.6));
      for (let f = start; f < Math.min(stop, to, mouths.length); f++) mouths[f] = open;
    });
  });
  return mouths;
}
