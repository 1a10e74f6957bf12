// The voice of the built-in engine's videos: eSpeak NG, compiled to WebAssembly (npm
// `espeak-ng`), so speech needs nothing installed and nothing downloaded. It runs in the
// video's render process (videoProcess.ts), never on the server's event loop. The output is a function
// of the text alone: each video gets a fresh instance (one run of eSpeak's command line),
// and the instance's clock is a counter, since eSpeak seeds its randomness (the noise of
// its consonants) with the time of day.
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import ESpeakNg from 'espeak-ng';
import { escapeXml } from './markup.ts';

/** Samples per second of eSpeak's output (mono, 16-bit). */
export const SPEECH_SAMPLE_RATE = 22_050;

/**
 * Silence put between captions when they are spoken in one go, long enough to be told
 * from the pauses of speech (a sentence's end is under half a second at this pace), so
 * that each caption's speech can be cut out and placed at its caption's time.
 */
const CUE_BREAK_MS = 1500;
/** A sample this quiet or quieter is silence. */
const SILENT_SAMPLE = 8;
/** A stretch of silence at least this long is a break between captions. */
const BREAK_MIN_SAMPLES = Math.round(SPEECH_SAMPLE_RATE * 0.8);

export interface Voice {
  /** eSpeak voice and variant, e.g. `en-us+f3`. */
  name: string;
  /** Words per minute. */
  wordsPerMinute: number;
}

/** The part of the WebAssembly global used here (the project's TypeScript libraries do not declare it). */
interface WasmApi {
  compile(bytes: Uint8Array): Promise<object>;
  Instance: new (module: object, imports: object) => { exports: object };
}
const Wasm = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;

/** eSpeak's WebAssembly, compiled once per process (instantiating it again is cheap). */
let compiled: Promise<object> | undefined;
const espeakWasm = () => (compiled ??= readFile(createRequire(import.meta.url).resolve('espeak-ng').replace(/\.js$/u, '.wasm')).then((bytes) => Wasm.compile(bytes)));

/** The time functions Emscripten gives a module, replaced by a counter: same calls, same answers. */
const CLOCK_IMPORTS = ['emscripten_date_now', 'emscripten_get_now'];

/** Runs eSpeak once on `ssml` and returns its samples. */
async function synthesise(ssml: string, voice: Voice): Promise<Int16Array> {
  let errors = '';
  const wasm = await espeakWasm();
  let tick = 0;
  // Emscripten's file system signals a missing file (eSpeak looks for many) with an error
  // whose stack it takes each time: some 15% of the speech's CPU, for stacks nobody reads.
  const stackTraceLimit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  const espeak = await ESpeakNg({
    instantiateWasm(imports, done) {
      for (const namespace of Object.values(imports)) {
        for (const name of CLOCK_IMPORTS) if (name in namespace) namespace[name] = () => ++tick;
      }
      // Synchronous, so that a failure rejects the module's promise instead of leaving it pending.
      const instance = new Wasm.Instance(wasm, imports);
      done(instance, wasm);
      return instance.exports;
    },
    arguments: ['-m', '-v', voice.name, '-s', String(voice.wordsPerMinute), '-w', '/speech.wav', '-f', '/script.xml'],
    preRun: [(m: { FS: { writeFile(path: string, data: string): void } }) => m.FS.writeFile('/script.xml', ssml)],
    print: () => {},
    printErr: (line: string) => {
      errors += `${line}\n`;
    },
    // eSpeak's exit would otherwise set the thread's exit code.
    quit: (_status: number, toThrow: unknown) => {
      throw toThrow;
    },
  }).finally(() => {
    Error.stackTraceLimit = stackTraceLimit;
  });
  let wav: Uint8Array;
  try {
    wav = espeak.FS.readFile('/speech.wav');
  } catch {
    throw new Error(`eSpeak NG wrote no speech: ${errors.trim() || 'no message'}`);
  }
  return wavSamples(wav);
}

/** The 16-bit samples of a WAV file's `data` chunk. */
export function wavSamples(wav: Uint8Array): Int16Array {
  const view = new DataView(wav.buffer, wav.byteOffset, wav.byteLength);
  for (let at = 12; at + 8 <= wav.byteLength; ) {
    const id = String.fromCharCode(...wav.subarray(at, at + 4));
    const size = view.getUint32(at + 4, true);
    if (id === 'data') {
      // eSpeak writing to a file it cannot seek leaves the size at its maximum: take what is there.
      const bytes = Math.min(size, wav.byteLength - at - 8) & ~1;
      return new Int16Array(wav.slice(at + 8, at + 8 + bytes).buffer);
    }
    at += 8 + size + (size % 2);
  }
  throw new Error('eSpeak NG wrote a WAV file without a data chunk');
}

/** Where sound starts and ends in `samples` (start === end when it is all silence). */
function soundBounds(samples: Int16Array, from = 0, to = samples.length): [number, number] {
  let start = from;
  while (start < to && Math.abs(samples[start]!) <= SILENT_SAMPLE) start++;
  let end = to;
  while (end > start && Math.abs(samples[end - 1]!) <= SILENT_SAMPLE) end--;
  return [start, end];
}

/** The stretches of sound between breaks at least BREAK_MIN_SAMPLES long. */
function splitAtBreaks(samples: Int16Array): Int16Array[] {
  const parts: Int16Array[] = [];
  let partStart = 0;
  let quietSince = -1;
  for (let i = 0; i <= samples.length; i++) {
    const quiet = i < samples.length && Math.abs(samples[i]!) <= SILENT_SAMPLE;
    if (quiet) {
      if (quietSince < 0) quietSince = i;
      continue;
    }
    if (quietSince >= 0 && i - quietSince >= BREAK_MIN_SAMPLES) {
      const [start, end] = soundBounds(samples, partStart, quietSince);
      if (end > start) parts.push(samples.subarray(start, end));
      partStart = i;
    }
    quietSince = -1;
  }
  const [start, end] = soundBounds(samples, partStart, samples.length);
  if (end > start) parts.push(samples.subarray(start, end));
  return parts;
}

/** A caption to speak: its text and the sample it is shown from. */
export interface SpokenCue {
  text: string;
  startSample: number;
}

/**
 * Captions spoken in one run of eSpeak at most. Its output is kept whole in memory
 * several times over (eSpeak's in-memory file as it grows, the copy read out, the samples),
 * so one run for the longest script (some 360 captions, 25 minutes of sound with the
 * breaks) held over 600 MB; runs of this many captions (some 2 minutes) keep a render's
 * memory to what its own speech takes, whatever the script's length. A script of up to
 * this many captions (over a minute of video) is spoken in one run, as before.
 */
const CUES_PER_RUN = 32;

/** Sound placed at a sample of the video. */
interface Placed {
  at: number;
  samples: Int16Array;
}

/**
 * The speech of a video: each caption spoken from the moment it shows (or right after the
 * one before, when that one ran long). eSpeak speaks the captions in runs of
 * CUES_PER_RUN with a break between them; each stretch of sound between breaks is one
 * caption. Should a run's stretches not match its captions one to one (a caption with
 * nothing to say, say), that run's whole speech is placed from its first caption instead.
 * Returns the samples (possibly longer than the video: the caller fits them).
 */
export async function speakCues(cues: SpokenCue[], voice: Voice): Promise<Int16Array> {
  const sayable = cues.filter((c) => /[\p{L}\p{N}]/u.test(c.text));
  if (sayable.length === 0) return new Int16Array(0);
  const gap = Math.round(SPEECH_SAMPLE_RATE * 0.05);
  const placed: Placed[] = [];
  let length = 0;
  const place = (samples: Int16Array, startSample: number) => {
    const at = Math.max(startSample, length === 0 ? 0 : length + gap);
    // A copy: the run's whole output (breaks and all) is let go once its parts are placed.
    placed.push({ at, samples: samples.slice() });
    length = at + samples.length;
  };
  for (let from = 0; from < sayable.length; from += CUES_PER_RUN) {
    const run = sayable.slice(from, from + CUES_PER_RUN);
    const ssml = `<speak>${run.map((c) => escapeXml(c.text)).join(` <break time="${CUE_BREAK_MS}ms"/> `)}</speak>`;
    const samples = await synthesise(ssml, voice);
    const parts = splitAtBreaks(samples);
    if (parts.length !== run.length) {
      const [start, end] = soundBounds(samples);
      if (end > start) place(samples.subarray(start, end), run[0]!.startSample);
      continue;
    }
    parts.forEach((part, i) => place(part, run[i]!.startSample));
  }
  const out = new Int16Array(length);
  for (const { at, samples } of placed) out.set(samples, at);
  return out;
}
