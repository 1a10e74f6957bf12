// Reads what the runner needs of an MP4 (an ISO base media file, ISO/IEC 14496-12) without
// FFmpeg: its brands, its duration, and the handler of each track (`vide`, `soun`, ...).
// The bytes come from a service under test and may be anything: every box's size is
// checked against the bytes that remain before it is used, nothing is allocated by a
// size a box claims (the boxes are views into the bytes already read), the walk only
// descends the few containers it names, and every step moves forward by a box's header at
// least, so a hostile file ends the walk with a problem rather than a loop or an
// allocation.

/** One track: its handler type (`vide` video, `soun` audio, `text`, ...) and its own duration. */
export interface Mp4Track {
  handler: string;
  /** null: the track states none (0, or the all-ones "unknown"). */
  durationSeconds: number | null;
}

export interface Mp4Info {
  majorBrand: string;
  compatibleBrands: string[];
  /** The presentation's duration (mvhd, or a fragmented file's mehd); null where it states none. */
  durationSeconds: number | null;
  tracks: Mp4Track[];
  /** The top-level boxes in order, for messages. */
  topLevel: string[];
}

export type Mp4Reading = { ok: true; info: Mp4Info } | { ok: false; problem: string };

/**
 * The most boxes read at any one level: a real file has a handful at the top and a few
 * tracks; a file of millions of 8-byte boxes is refused instead of walked.
 */
export const MAX_BOXES_PER_LEVEL = 4096;

interface Box {
  type: string;
  /** Offset of the box's first byte in the file. */
  at: number;
  /** Its payload, after the header, and where that begins in the file. */
  body: Uint8Array;
  bodyAt: number;
}

class Mp4Problem extends Error {}

/** Reads an MP4's brands, duration and tracks, or says what makes it no MP4. */
export function readMp4(bytes: Uint8Array): Mp4Reading {
  try {
    return { ok: true, info: read(bytes) };
  } catch (error) {
    if (error instanceof Mp4Problem) return { ok: false, problem: error.message };
    throw error;
  }
}

function read(bytes: Uint8Array): Mp4Info {
  if (bytes.byteLength < 8) throw new Mp4Problem(`${bytes.byteLength} bytes: too short for a single box (an MP4 begins with an 8-byte box header)`);
  const top = boxes(bytes, 0, 'the file');
  const topLevel = top.map((box) => box.type);
  const ftyp = top.find((box) => box.type === 'ftyp');
  if (!ftyp) throw new Mp4Problem(`no ftyp box: the top-level boxes are ${list(topLevel)}`);
  const moovIndex = top.findIndex((box) => box.type === 'moov');
  if (moovIndex < 0) throw new Mp4Problem(`no moov box: the top-level boxes are ${list(topLevel)}`);
  if (top.indexOf(ftyp) > moovIndex) throw new Mp4Problem(`the ftyp box comes after moov (${list(topLevel)}): a file's type is stated before its content`);
  if (ftyp.body.byteLength < 8 || (ftyp.body.byteLength - 8) % 4 !== 0) throw new Mp4Problem(`the ftyp box at ${ftyp.at} holds ${ftyp.body.byteLength} bytes: a major brand, a version and whole 4-byte compatible brands are expected`);
  const majorBrand = fourcc(ftyp.body, 0);
  const compatibleBrands: string[] = [];
  for (let offset = 8; offset + 4 <= ftyp.body.byteLength; offset += 4) compatibleBrands.push(fourcc(ftyp.body, offset));

  const moov = top[moovIndex]!;
  const inMoov = boxes(moov.body, moov.bodyAt, 'moov');
  const mvhd = inMoov.find((box) => box.type === 'mvhd');
  if (!mvhd) throw new Mp4Problem(`moov has no mvhd box (it holds ${list(inMoov.map((box) => box.type))})`);
  let durationSeconds = timed(mvhd, 'mvhd', 12, 20);
  if (durationSeconds === null) {
    // A fragmented file may state its whole duration in mvex/mehd instead.
    const mvex = inMoov.find((box) => box.type === 'mvex');
    const mehd = mvex ? boxes(mvex.body, mvex.bodyAt, 'mvex').find((box) => box.type === 'mehd') : undefined;
    if (mehd) durationSeconds = scaled(mehd, 'mehd', timescaleOf(mvhd, 'mvhd', 12, 20), 4, 4);
  }
  const tracks = inMoov.filter((box) => box.type === 'trak').map((trak) => track(trak));
  return { majorBrand, compatibleBrands, durationSeconds, tracks, topLevel };
}

function track(trak: Box): Mp4Track {
  const mdia = boxes(trak.body, trak.bodyAt, 'trak').find((box) => box.type === 'mdia');
  if (!mdia) throw new Mp4Problem(`the trak box at ${trak.at} has no mdia box`);
  const inMdia = boxes(mdia.body, mdia.bodyAt, 'mdia');
  const hdlr = inMdia.find((box) => box.type === 'hdlr');
  if (!hdlr) throw new Mp4Problem(`the mdia box at ${mdia.at} has no hdlr box, which names the track's kind`);
  // version and flags (4), pre_defined (4), handler_type (4).
  if (hdlr.body.byteLength < 12) throw new Mp4Problem(`the hdlr box at ${hdlr.at} holds ${hdlr.body.byteLength} bytes, fewer than the 12 that reach its handler type`);
  const mdhd = inMdia.find((box) => box.type === 'mdhd');
  return { handler: fourcc(hdlr.body, 8), durationSeconds: mdhd ? timed(mdhd, 'mdhd', 12, 20) : null };
}

/**
 * A full box's timescale and duration in seconds (mvhd and mdhd place them alike): after
 * the version and flags, version 0 has 32-bit creation and modification times, version 1
 * 64-bit ones; `at0`/`at1` are the timescale's offsets for each.
 */
function timed(box: Box, name: string, at0: number, at1: number): number | null {
  const timescale = timescaleOf(box, name, at0, at1);
  return scaled(box, name, timescale, at0 + 4, at1 + 4);
}

function timescaleOf(box: Box, name: string, at0: number, at1: number): number {
  const view = viewOf(box.body);
  const version = versionOf(box, name);
  const at = version === 0 ? at0 : at1;
  if (box.body.byteLength < at + 4) throw new Mp4Problem(`the ${name} box at ${box.at} holds ${box.body.byteLength} bytes, fewer than its timescale needs`);
  const timescale = view.getUint32(at);
  if (timescale === 0) throw new Mp4Problem(`the ${name} box at ${box.at} states a timescale of 0: no duration can be told from it`);
  return timescale;
}

/** A duration at `at0` (version 0, 32 bits) or `at1` (version 1, 64 bits), in seconds; null for 0 or all ones (unknown). */
function scaled(box: Box, name: string, timescale: number, at0: number, at1: number): number | null {
  const view = viewOf(box.body);
  const version = versionOf(box, name);
  const width = version === 0 ? 4 : 8;
  const at = version === 0 ? at0 : at1;
  if (box.body.byteLength < at + width) throw new Mp4Problem(`the ${name} box at ${box.at} holds ${box.body.byteLength} bytes, fewer than its duration needs`);
  if (version === 0) {
    const units = view.getUint32(at);
    return units === 0 || units === 0xffffffff ? null : units / timescale;
  }
  const units = view.getBigUint64(at);
  return units === 0n || units === 0xffffffffffffffffn ? null : Number(units) / timescale;
}

function versionOf(box: Box, name: string): 0 | 1 {
  if (box.body.byteLength < 4) throw new Mp4Problem(`the ${name} box at ${box.at} is empty: a full box begins with its version and flags`);
  const version = box.body[0]!;
  if (version !== 0 && version !== 1) throw new Mp4Problem(`the ${name} box at ${box.at} has version ${version}; versions 0 and 1 are defined`);
  return version;
}

/**
 * The boxes laid end to end in `body` (whose first byte is at `base` in the file), each
 * checked against the bytes left: a size below its header or past the end is a problem,
 * size 0 means "to the end", size 1 a 64-bit size after the type.
 */
function boxes(body: Uint8Array, base: number, where: string): Box[] {
  const view = viewOf(body);
  const found: Box[] = [];
  let offset = 0;
  while (offset < body.byteLength) {
    if (found.length >= MAX_BOXES_PER_LEVEL) throw new Mp4Problem(`${where} holds more than ${MAX_BOXES_PER_LEVEL} boxes`);
    const at = base + offset;
    const left = body.byteLength - offset;
    if (left < 8) throw new Mp4Problem(`${where} ends with ${left} stray bytes at ${at}, too few for a box header`);
    const size32 = view.getUint32(offset);
    const type = fourcc(body, offset + 4);
    let header = 8;
    let size: number;
    if (size32 === 1) {
      if (left < 16) throw new Mp4Problem(`the ${printable(type)} box at ${at} announces a 64-bit size but is cut off before it`);
      const size64 = view.getBigUint64(offset + 8);
      header = 16;
      if (size64 > BigInt(left)) throw new Mp4Problem(`the ${printable(type)} box at ${at} claims ${size64} bytes, but only ${left} remain in ${where} (truncated?)`);
      size = Number(size64);
    } else if (size32 === 0) {
      size = left;
    } else {
      size = size32;
      if (size > left) throw new Mp4Problem(`the ${printable(type)} box at ${at} claims ${size} bytes, but only ${left} remain in ${where} (truncated?)`);
    }
    if (size < header) throw new Mp4Problem(`the ${printable(type)} box at ${at} claims ${size} bytes, less than its own ${header}-byte header`);
    found.push({ type, at, body: body.subarray(offset + header, offset + size), bodyAt: at + header });
    offset += size;
  }
  return found;
}

function viewOf(bytes: Uint8Array): DataView {
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

function fourcc(bytes: Uint8Array, at: number): string {
  return String.fromCharCode(bytes[at]!, bytes[at + 1]!, bytes[at + 2]!, bytes[at + 3]!);
}

/** A box type as a message can show it: its four characters, or their hex where they are not printable. */
function printable(type: string): string {
  return /^[\x20-\x7e]{4}$/.test(type) ? `'${type}'` : `0x${[...type].map((c) => c.charCodeAt(0).toString(16).padStart(2, '0')).join('')}`;
}

function list(types: string[]): string {
  const shown = types.slice(0, 12).map(printable).join(', ');
  return types.length > 12 ? `${shown}, … (${types.length} in all)` : shown || 'none';
}
