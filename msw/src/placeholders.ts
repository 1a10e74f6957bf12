// The files of a ready job, as the mock serves them: a preview that a page can show (a
// PNG of one colour drawn from the avatar's ID, so each avatar has its own and keeps it)
// and a video's captions, cut from its script by the engine's own timeline. No video is
// rendered: an MP4 needs the server's encoder.
import type { Artifact, ArtifactRequest, GenerationEngine } from '../../server/src/domain/engine.ts';
import { CAPTIONS_FILE_NAME, FILE_NAME } from '../../server/src/domain/files.ts';
import type { VideoInput } from '../../server/src/domain/model.ts';
import { webVtt } from '../../server/src/engine/timeline.ts';

const PREVIEW_SIZE = 64;

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(bytes: Uint8Array): number {
  let c = 0xffffffff;
  for (const b of bytes) c = CRC_TABLE[(c ^ b) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function u32(n: number): number[] {
  return [(n >>> 24) & 0xff, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff];
}

function chunk(type: string, data: Uint8Array): number[] {
  const typed = new Uint8Array([...new TextEncoder().encode(type), ...data]);
  return [...u32(data.length), ...typed, ...u32(crc32(typed))];
}

/** zlib with stored (uncompressed) blocks: what PNG's IDAT needs, with no deflate to write. */
function zlibStored(data: Uint8Array): Uint8Array {
  const out: number[] = [0x78, 0x01];
  for (let at = 0; at < data.length || at === 0; at += 65535) {
    const block = data.subarray(at, at + 65535);
    const last = at + 65535 >= data.length ? 1 : 0;
    out.push(last, block.length & 0xff, block.length >>> 8, ~block.length & 0xff, (~block.length >>> 8) & 0xff, ...block);
    if (last) break;
  }
  let a = 1;
  let b = 0;
  for (const byte of data) {
    a = (a + byte) % 65521;
    b = (b + a) % 65521;
  }
  out.push(...u32(((b << 16) | a) >>> 0));
  return new Uint8Array(out);
}

/** A square PNG of one colour, 8-bit RGB. */
export function solidPng(rgb: readonly [number, number, number], size = PREVIEW_SIZE): Uint8Array {
  const row = [0, ...Array.from({ length: size }, () => rgb).flat()];
  const pixels = new Uint8Array(Array.from({ length: size }, () => row).flat());
  const header = new Uint8Array([...u32(size), ...u32(size), 8, 2, 0, 0, 0]);
  return new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, ...chunk('IHDR', header), ...chunk('IDAT', zlibStored(pixels)), ...chunk('IEND', new Uint8Array())]);
}

/** A soft colour of the ID: the same ID, the same colour. */
function colourOf(id: string): [number, number, number] {
  const hash = crc32(new TextEncoder().encode(id));
  return [128 + (hash & 0x7f), 128 + ((hash >>> 8) & 0x7f), 128 + ((hash >>> 16) & 0x7f)];
}

/** The engine port's `artifact`, for the mock: what readJobFile hands a ready job's file request to. */
export const placeholderFiles: Pick<GenerationEngine, 'artifact'> = {
  async artifact({ job, name }: ArtifactRequest): Promise<Artifact | null> {
    if (job.kind === 'avatar' && name === FILE_NAME.avatar) return { contentType: 'image/png', body: solidPng(colourOf(job.id)) };
    if (job.kind === 'avatar_video' && name === CAPTIONS_FILE_NAME) {
      return { contentType: 'text/vtt; charset=utf-8', body: new TextEncoder().encode(webVtt((job.input as VideoInput).script)) };
    }
    return null;
  },
};
