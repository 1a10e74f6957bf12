// The runner's readers of the files a service links to (observe/mp4.ts, webvtt.ts,
// image.ts): they read the samples the test implementations serve, and hostile bytes
// (cut off anywhere, boxes of size 0, 1 and past the end, boxes nested or repeated without
// end, random bytes and random damage) end in a problem, never an exception, a loop or an
// allocation by a claimed size.
import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { readImage } from '../src/observe/image.ts';
import { MAX_BOXES_PER_LEVEL, readMp4 } from '../src/observe/mp4.ts';
import { readWebVtt } from '../src/observe/webvtt.ts';
import { SAMPLE_CAPTIONS, SAMPLE_MP4, SAMPLE_PNG, SAMPLE_SECONDS } from './fixtures/media.ts';

const SEED = { seed: 20261128 };

/** A box: 32-bit size, type, payload. */
function box(type: string, ...payload: Uint8Array[]): Buffer {
  const body = Buffer.concat(payload);
  const header = Buffer.alloc(8);
  header.writeUInt32BE(8 + body.byteLength);
  header.write(type, 4, 'latin1');
  return Buffer.concat([header, body]);
}

function u32(...values: number[]): Buffer {
  const out = Buffer.alloc(4 * values.length);
  values.forEach((value, i) => out.writeUInt32BE(value, 4 * i));
  return out;
}

function u64(value: bigint): Buffer {
  const out = Buffer.alloc(8);
  out.writeBigUInt64BE(value);
  return out;
}

/** mvhd or mdhd: version 0 (32-bit times) or 1 (64-bit), timescale and duration; the rest of the box left as zeros. */
function header(type: 'mvhd' | 'mdhd', version: 0 | 1, timescale: number, duration: number): Buffer {
  const times = version === 0 ? u32(0, 0, timescale, duration) : Buffer.concat([u64(0n), u64(0n), u32(timescale), u64(BigInt(duration))]);
  return box(type, Buffer.from([version, 0, 0, 0]), times, Buffer.alloc(type === 'mvhd' ? 80 : 4));
}

function trak(handler: string, timescale: number, duration: number): Buffer {
  return box('trak', box('mdia', header('mdhd', 0, timescale, duration), box('hdlr', u32(0, 0), Buffer.from(handler, 'latin1'), Buffer.alloc(13))));
}

const FTYP = box('ftyp', Buffer.from('isom', 'latin1'), u32(512), Buffer.from('isomavc1', 'latin1'));

/** Where each top-level box of a file ends. */
function topLevelEnds(bytes: Buffer): number[] {
  const ends: number[] = [];
  for (let at = 0; at + 8 <= bytes.byteLength; at += bytes.readUInt32BE(at)) ends.push(at + bytes.readUInt32BE(at));
  return ends;
}

describe('readMp4', () => {
  it('when given the sample the test implementations serve, then it reads its brands, its 6.4 s and a video and an audio track', () => {
    const reading = readMp4(SAMPLE_MP4);

    expect(reading).toMatchObject({ ok: true, info: { majorBrand: 'isom', durationSeconds: SAMPLE_SECONDS, topLevel: ['ftyp', 'moov', 'free', 'mdat'] } });
    expect(reading.ok && reading.info.tracks.map((t) => t.handler)).toEqual(['vide', 'soun']);
  });

  it('when a well-formed file of any tracks, versions and durations is built, then it reads exactly those', () => {
    const handler = fc.constantFrom('vide', 'soun', 'text', 'subt', 'meta');
    fc.assert(
      fc.property(fc.array(handler, { maxLength: 6 }), fc.constantFrom<0 | 1>(0, 1), fc.integer({ min: 1, max: 96_000 }), fc.integer({ min: 1, max: 0xfffffffe }), (handlers, version, timescale, duration) => {
        const file = Buffer.concat([FTYP, box('moov', header('mvhd', version, timescale, duration), ...handlers.map((h) => trak(h, timescale, duration))), box('mdat', Buffer.alloc(16))]);
        const reading = readMp4(file);
        expect(reading.ok && reading.info.tracks.map((t) => t.handler)).toEqual(handlers);
        expect(reading.ok && reading.info.durationSeconds).toBeCloseTo(duration / timescale, 9);
      }),
      SEED,
    );
  });

  it('when the sample is cut off anywhere, then it is an MP4 only where the cut falls between top-level boxes after moov, and never throws', () => {
    const ends = topLevelEnds(SAMPLE_MP4);
    const moovEnd = ends[1]!;
    fc.assert(
      fc.property(fc.integer({ min: 0, max: SAMPLE_MP4.byteLength - 1 }), (cut) => {
        const reading = readMp4(SAMPLE_MP4.subarray(0, cut));
        expect(reading.ok).toBe(cut >= moovEnd && ends.includes(cut));
        if (!reading.ok) expect(reading.problem).toMatch(/\S/);
      }),
      SEED,
    );
  });

  it('when any bytes of the sample are overwritten, or the bytes are random, then it answers a reading or a problem', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.nat(SAMPLE_MP4.byteLength - 1), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 8 }), (damage) => {
        const bytes = Buffer.from(SAMPLE_MP4);
        for (const [at, value] of damage) bytes[at] = value;
        expect(typeof readMp4(bytes).ok).toBe('boolean');
      }),
      SEED,
    );
    fc.assert(fc.property(fc.uint8Array({ maxLength: 512 }), (bytes) => {
      expect(typeof readMp4(bytes).ok).toBe('boolean');
    }), SEED);
  });

  it.each([
    ['a 32-bit size past the end', Buffer.concat([FTYP, u32(0xffffffff), Buffer.from('moov', 'latin1')]), /'moov' box at 24 claims 4294967295 bytes, but only 8 remain in the file/],
    ['a 64-bit size of 2^64-1', Buffer.concat([FTYP, u32(1), Buffer.from('moov', 'latin1'), u64(0xffffffffffffffffn)]), /'moov' box at 24 claims 18446744073709551615 bytes, but only 16 remain/],
    ['a 64-bit size below its own 16-byte header', Buffer.concat([FTYP, u32(1), Buffer.from('moov', 'latin1'), u64(8n)]), /claims 8 bytes, less than its own 16-byte header/],
    ['a size below its 8-byte header', Buffer.concat([FTYP, u32(4), Buffer.from('moov', 'latin1')]), /claims 4 bytes, less than its own 8-byte header/],
    ['a 64-bit size cut off', Buffer.concat([FTYP, u32(1), Buffer.from('moov', 'latin1'), u32(0)]), /announces a 64-bit size but is cut off/],
    ['stray bytes after the last box', Buffer.concat([FTYP, box('moov', header('mvhd', 0, 1000, 1000)), Buffer.from([1, 2, 3])]), /3 stray bytes at \d+/],
    ['no ftyp', box('moov', header('mvhd', 0, 1000, 1000)), /no ftyp box: the top-level boxes are 'moov'/],
    ['no moov', Buffer.concat([FTYP, box('mdat')]), /no moov box: the top-level boxes are 'ftyp', 'mdat'/],
    ['moov before ftyp', Buffer.concat([box('moov', header('mvhd', 0, 1000, 1000)), FTYP]), /ftyp box comes after moov/],
    ['a timescale of 0', Buffer.concat([FTYP, box('moov', header('mvhd', 0, 0, 1000))]), /timescale of 0/],
    ['an mvhd of version 7', Buffer.concat([FTYP, box('moov', box('mvhd', Buffer.from([7, 0, 0, 0]), Buffer.alloc(96)))]), /version 7/],
    ['a track without hdlr', Buffer.concat([FTYP, box('moov', header('mvhd', 0, 1000, 1000), box('trak', box('mdia')))]), /has no hdlr box/],
    ['a type of unprintable bytes', Buffer.concat([FTYP, u32(0xfffffff0), Buffer.from([0, 1, 2, 3])]), /0x00010203 box at 24 claims/],
  ])('when a file has %s, then the problem says so', (_what, bytes, problem) => {
    const reading = readMp4(bytes);
    expect(reading.ok).toBe(false);
    expect(!reading.ok && reading.problem).toMatch(problem);
  });

  it('when a box has size 0, then it runs to the end of the file, as the format says', () => {
    const moov = box('moov', header('mvhd', 1, 1000, 2500), trak('vide', 1000, 2500));
    moov.writeUInt32BE(0, 0);

    expect(readMp4(Buffer.concat([FTYP, moov]))).toMatchObject({ ok: true, info: { durationSeconds: 2.5, tracks: [{ handler: 'vide', durationSeconds: 2.5 }] } });
  });

  it('when boxes are nested 10,000 deep or repeated past the bound, then it answers at once with a problem', () => {
    let nested: Buffer = box('trak');
    for (let depth = 0; depth < 10_000; depth++) nested = box('trak', nested);
    const deep = readMp4(Buffer.concat([FTYP, box('moov', header('mvhd', 0, 1000, 1000), nested)]));
    expect(!deep.ok && deep.problem).toMatch(/has no mdia box/);

    const many = readMp4(Buffer.concat([FTYP, ...Array.from({ length: MAX_BOXES_PER_LEVEL + 1 }, () => box('free'))]));
    expect(!many.ok && many.problem).toMatch(new RegExp(`more than ${MAX_BOXES_PER_LEVEL} boxes`));
  });
});

describe('readWebVtt', () => {
  it('when given the sample captions, then it reads their two cues', () => {
    expect(readWebVtt(SAMPLE_CAPTIONS.toString('utf8'))).toEqual({
      ok: true,
      cues: [
        { startSeconds: 0, endSeconds: 3.2, text: 'Hi! This short clip was made' },
        { startSeconds: 3.2, endSeconds: 6.4, text: 'by the conformance runner.' },
      ],
    });
  });

  it('when cues of any timing and text are written, with or without hours, identifiers, CRLF and a BOM, then they read back', () => {
    const stamp = (seconds: number, hours: boolean) => {
      const ms = Math.round(seconds * 1000);
      const [h, m, s, t] = [Math.floor(ms / 3_600_000), Math.floor(ms / 60_000) % 60, Math.floor(ms / 1000) % 60, ms % 1000];
      return `${hours || h > 0 ? `${String(h).padStart(2, '0')}:` : ''}${String(m).padStart(2, '0')}:${String(s).padStart(2, '0')}.${String(t).padStart(3, '0')}`;
    };
    const cue = fc.record({ start: fc.integer({ min: 0, max: 20_000_000 }), length: fc.integer({ min: 1, max: 100_000 }), text: fc.stringMatching(/^[a-zA-Z!?,. ]{1,30}$/), id: fc.option(fc.stringMatching(/^[a-z0-9]{1,8}$/)), hours: fc.boolean() });
    fc.assert(
      fc.property(fc.array(cue, { maxLength: 8 }), fc.constantFrom('\n', '\r\n'), fc.boolean(), (cues, eol, bom) => {
        const blocks = cues.map((c) => [...(c.id === null ? [] : [c.id]), `${stamp(c.start / 1000, c.hours)} --> ${stamp((c.start + c.length) / 1000, c.hours)} align:start`, c.text].join(eol));
        const text = `${bom ? '\uFEFF' : ''}WEBVTT - captions${eol}${eol}NOTE made by a test${eol}${eol}${blocks.join(eol + eol)}${eol}`;
        const reading = readWebVtt(text);
        expect(reading.ok && reading.cues.map((c) => [Math.round(c.startSeconds * 1000), Math.round(c.endSeconds * 1000), c.text])).toEqual(cues.map((c) => [c.start, c.start + c.length, c.text]));
      }),
      SEED,
    );
  });

  it('when the text is random, then it answers a reading or a problem', () => {
    fc.assert(fc.property(fc.string({ maxLength: 400 }), (text) => {
      expect(typeof readWebVtt(text).ok).toBe('boolean');
    }), SEED);
    fc.assert(fc.property(fc.string({ maxLength: 400 }), (text) => {
      expect(typeof readWebVtt(`WEBVTT\n\n${text}`).ok).toBe('boolean');
    }), SEED);
  });

  it.each([
    ['no signature', '1\n00:00.000 --> 00:01.000\nHi', /first line is "1", not "WEBVTT"/],
    ['a signature run into a word', 'WEBVTTX\n', /not "WEBVTT"/],
    ['a cue ending before it starts', 'WEBVTT\n\n00:02.000 --> 00:01.000\nHi', /line 3: the cue ends \(00:01.000\) no later than it starts/],
    ['60 minutes', 'WEBVTT\n\n00:60:00.000 --> 01:00:01.000\nHi', /line 3: .* not \[hh:\]mm:ss\.ttt/],
    ['a comma for the decimal point, as SRT writes it', 'WEBVTT\n\n00:00:01,000 --> 00:00:02,000\nHi', /not \[hh:\]mm:ss\.ttt/],
    ['a block that is no cue', 'WEBVTT\n\nhello\nworld', /line 3: a block that is neither a cue/],
  ])('when the file has %s, then the problem says so', (_what, text, problem) => {
    const reading = readWebVtt(text);
    expect(reading.ok).toBe(false);
    expect(!reading.ok && reading.problem).toMatch(problem);
  });
});

describe('readImage', () => {
  /** A JPEG's first segments: SOI, an APP0 of `app` bytes, then a baseline SOF0 of width x height. */
  const jpeg = (width: number, height: number, app = 14) =>
    Buffer.from([0xff, 0xd8, 0xff, 0xe0, (app + 2) >> 8, (app + 2) & 255, ...Array<number>(app).fill(0), 0xff, 0xff, 0xc0, 0, 11, 8, height >> 8, height & 255, width >> 8, width & 255, 1, 1, 0x11, 0]);

  it('when given the PNGs the fixtures and the docs serve, then it reads their dimensions', () => {
    expect(readImage(SAMPLE_PNG)).toEqual({ ok: true, info: { format: 'png', width: 4, height: 4 } });
    const docs = readImage(readFileSync(new URL('../../docs/media/preview.png', import.meta.url)));
    expect(docs.ok && docs.info.format).toBe('png');
    expect(docs.ok && docs.info.width * docs.info.height).toBeGreaterThan(0);
  });

  it('when a JPEG of any size is built, fill bytes before its SOF included, then it reads its dimensions', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 65_535 }), fc.integer({ min: 0, max: 65_535 }), fc.integer({ min: 0, max: 300 }), (width, height, app) => {
        expect(readImage(jpeg(width, height, app))).toEqual({ ok: true, info: { format: 'jpeg', width, height } });
      }),
      SEED,
    );
  });

  it('when either format is cut off anywhere, or its bytes are random after its signature, then it answers a reading or a problem', () => {
    const whole = [SAMPLE_PNG, jpeg(640, 480)];
    fc.assert(
      fc.property(fc.constantFrom(0, 1), fc.nat(), (which, cut) => {
        const bytes = whole[which]!;
        const reading = readImage(bytes.subarray(0, cut % bytes.byteLength));
        if (!reading.ok) expect(reading.problem).toMatch(/\S/);
      }),
      SEED,
    );
    fc.assert(fc.property(fc.constantFrom(Buffer.from([0xff, 0xd8]), SAMPLE_PNG.subarray(0, 8)), fc.uint8Array({ maxLength: 300 }), (head, tail) => {
      expect(typeof readImage(Buffer.concat([head, tail])).ok).toBe('boolean');
    }), SEED);
  });

  it.each([
    ['neither signature', Buffer.from('GIF89a'), /neither a PNG signature .* nor a JPEG/],
    ['a PNG whose first chunk is not IHDR', Buffer.concat([SAMPLE_PNG.subarray(0, 8), u32(13), Buffer.from('IDAT'), Buffer.alloc(17)]), /first chunk is "IDAT"/],
    ['a PNG of width 0', Buffer.concat([SAMPLE_PNG.subarray(0, 16), u32(0, 4)]), /a PNG of 0x4/],
    ['a JPEG segment longer than the file', Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0xff, 0xff, 0, 0]), /claims 65535 bytes, but only 4 remain/],
    ['a JPEG segment of length 1', Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 1]), /claims 1 bytes, less than its own length field/],
    ['a JPEG scan before any frame', Buffer.from([0xff, 0xd8, 0xff, 0xda, 0, 2]), /scan comes at 2 before any start of frame/],
    ['a JPEG of width 0', jpeg(0, 10), /width of 0/],
  ])('when the bytes are %s, then the problem says so', (_what, bytes, problem) => {
    const reading = readImage(bytes);
    expect(reading.ok).toBe(false);
    expect(!reading.ok && reading.problem).toMatch(problem);
  });
});
