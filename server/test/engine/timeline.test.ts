// A video's timeline is a function of its script: its length at 2.5 words a second to the
// frame, captions that cover it end to end, WebVTT that a player reads as those captions,
// and a mouth that moves while words are said. What a speaking portrait changes is its mouth.
import { Resvg } from '@resvg/resvg-js';
import { describe, expect, it } from 'vitest';
import type { AvatarInput } from '../../src/domain/model.ts';
import { portraitSvg } from '../../src/engine/portrait.ts';
import { captionCues, mouthFrames, scriptWords, VIDEO_FPS, videoDurationSeconds, videoFrames, vttTime, webVtt, WORDS_PER_SECOND } from '../../src/engine/timeline.ts';
import { audioSamples } from '../../src/engine/video.ts';

const SCRIPT = 'Three weeks with this serum and my skin has never looked better. Here is my morning routine.';

describe('the length of a video', () => {
  it.each([
    ['17 words', SCRIPT, 6.8],
    ['one word: one second at least', 'Hi', 1],
    ['white space only separates', '  a  b\n\tc   ', 1.2],
    ['75 words: 30 seconds', Array.from({ length: 75 }, (_, i) => `word${i}`).join(' '), 30],
    ['a word count that is not a whole number of frames rounds to the frame', Array.from({ length: 7 }, () => 'w').join(' '), 2.8],
  ])('%s', (_name, script, seconds) => {
    expect(videoDurationSeconds(script)).toBe(seconds);
    expect(videoFrames(script)).toBe(Math.round(seconds * VIDEO_FPS));
    expect(Number.isInteger(videoDurationSeconds(script) * VIDEO_FPS)).toBe(true);
  });

  it('follows the documented pace', () => {
    expect(WORDS_PER_SECOND).toBe(2.5);
    expect(VIDEO_FPS).toBe(25);
  });
});

describe('the captions of a video', () => {
  it('cover the video end to end in order, each a whole number of frames, and hold every word once', () => {
    const script = `${SCRIPT} Then: cleanser, toner, serum, moisturiser and sunscreen, every single morning without fail, even when it rains!`;
    const cues = captionCues(script);

    expect(cues[0]!.start).toBe(0);
    expect(cues.at(-1)!.end).toBe(videoFrames(script));
    cues.slice(1).forEach((cue, i) => expect(cue.start).toBe(cues[i]!.end));
    expect(cues.flatMap((c) => c.text.split(' '))).toEqual(scriptWords(script));
    for (const cue of cues) {
      expect(cue.text.split(' ').length).toBeLessThanOrEqual(7);
      expect(cue.text.length <= 42 || !cue.text.includes(' ')).toBe(true);
    }
  });

  it('end at the end of a sentence', () => {
    expect(captionCues('Stop. Go on now please.').map((c) => c.text)).toEqual(['Stop.', 'Go on now please.']);
  });

  it('are none for a script without words, which still makes a one-second video', () => {
    expect(captionCues('   ')).toEqual([]);
    expect(videoFrames('   ')).toBe(VIDEO_FPS);
  });

  it('are written as WebVTT, with times on frame boundaries and the text escaped', () => {
    const vtt = webVtt('Tom & Jerry <3 --> forever.');

    expect(vtt).toBe('WEBVTT\n\n1\n00:00:00.000 --> 00:00:02.400\nTom &amp; Jerry &lt;3 --&gt; forever.\n');
    expect(vttTime(VIDEO_FPS * 3_725 + 1)).toBe('01:02:05.040');
  });
});

describe('the mouth of a video', () => {
  it('opens while words are said and rests after the last one', () => {
    const mouths = mouthFrames('Hello there.');

    expect(mouths).toHaveLength(videoFrames('Hello there.'));
    expect(mouths.slice(0, 20).filter((m) => m !== 'rest').length).toBeGreaterThan(5);
    expect(mouths.slice(20).every((m) => m === 'rest')).toBe(true);
  });
});

describe('the sound of a video', () => {
  it('never outlasts the picture: whole AAC frames, one fewer than would fill it', () => {
    for (const frames of [25, 170, 750, 7501]) {
      const samples = audioSamples(frames);
      expect(samples % 1024).toBe(0);
      expect(samples + 1024).toBeLessThanOrEqual((frames / VIDEO_FPS) * 22_050);
    }
  });
});

describe('a speaking portrait', () => {
  const SIZE = 128;
  const pixels = (svg: string) => new Resvg(svg, { fitTo: { mode: 'width', value: SIZE } }).render().pixels;
  // Dan's beard covers his mouth (the style draws it over the mouth): he speaks unseen.
  const inputs: { input: AvatarInput; seen: boolean }[] = [
    { input: { type: 'props', name: 'Ama', ethnicity: 'Black', sex: 'female', age: 28 }, seen: true },
    { input: { type: 'props', name: 'Kenji', ethnicity: 'Asian', sex: 'male', age: 34 }, seen: true },
    { input: { type: 'prompt', name: 'Noor', prompt: 'A calm news presenter' }, seen: true },
    { input: { type: 'photo', name: 'Dan', file: { type: 'url', url: 'https://cdn.example.com/dan.jpg' } }, seen: false },
  ];

  it.each(inputs)('$input.name: changes its mouth and nothing else', ({ input, seen }) => {
    const rest = pixels(portraitSvg(input));
    for (const mouth of ['open', 'round'] as const) {
      const speaking = pixels(portraitSvg(input, mouth));
      const changed: [number, number][] = [];
      for (let p = 0; p < SIZE * SIZE; p++) if (rest.readUInt32BE(p * 4) !== speaking.readUInt32BE(p * 4)) changed.push([p % SIZE, Math.floor(p / SIZE)]);

      expect(changed.length > 0).toBe(seen);
      // The style's mouth sits at x 26 to 38 and y 38 to 44 of its 64-unit square.
      for (const [x, y] of changed) {
        expect(x / SIZE).toBeGreaterThanOrEqual(26 / 64);
        expect(x / SIZE).toBeLessThanOrEqual(38 / 64);
        expect(y / SIZE).toBeGreaterThanOrEqual(37 / 64);
        expect(y / SIZE).toBeLessThanOrEqual(45 / 64);
      }
    }
  });
});
