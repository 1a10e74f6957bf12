// Reads an image's format and dimensions from its first bytes, as the runner judges a
// preview: a PNG's signature and IHDR chunk (RFC 2083 / ISO 15948), or a JPEG's markers up
// to its first start-of-frame (ITU-T T.81, B.2). The bytes come from a service under test:
// each marker's length is checked against what remains, and every step moves forward.

export interface ImageInfo {
  format: 'png' | 'jpeg';
  width: number;
  height: number;
}

export type ImageReading = { ok: true; info: ImageInfo } | { ok: false; problem: string };

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

/** Reads a PNG's or a JPEG's dimensions, or says why the bytes are neither. */
export function readImage(bytes: Uint8Array): ImageReading {
  if (PNG_SIGNATURE.every((byte, i) => bytes[i] === byte)) return png(bytes);
  if (bytes[0] === 0xff && bytes[1] === 0xd8) return jpeg(bytes);
  return { ok: false, problem: 'neither a PNG signature (89 50 4E 47 0D 0A 1A 0A) nor a JPEG start of image (FF D8)' };
}

function png(bytes: Uint8Array): ImageReading {
  // Signature (8), then the first chunk, which must be IHDR: length (4) = 13, type (4), width (4), height (4).
  if (bytes.byteLength < 24) return { ok: false, problem: `a PNG signature, then ${bytes.byteLength - 8} bytes: cut off before its IHDR chunk's dimensions` };
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const type = String.fromCharCode(...bytes.subarray(12, 16));
  if (type !== 'IHDR' || view.getUint32(8) !== 13) return { ok: false, problem: `a PNG whose first chunk is ${JSON.stringify(type)} of ${view.getUint32(8)} bytes, not IHDR of 13` };
  const width = view.getUint32(16);
  const height = view.getUint32(20);
  // PNG limits each dimension to 2^31 - 1, and 0 is no image.
  if (width === 0 || height === 0 || width > 0x7fffffff || height > 0x7fffffff) return { ok: false, problem: `a PNG of ${width}x${height}: each dimension must be 1 to 2^31-1` };
  return { ok: true, info: { format: 'png', width, height } };
}

function jpeg(bytes: Uint8Array): ImageReading {
  let offset = 2;
  while (offset < bytes.byteLength) {
    if (bytes[offset] !== 0xff) return { ok: false, problem: `a JPEG with ${hex(bytes[offset]!)} at ${offset} where a marker (FF ..) belongs` };
    // Any number of FF fill bytes may come before a marker's code.
    while (offset < bytes.byteLength && bytes[offset] === 0xff) offset++;
    if (offset >= bytes.byteLength) break;
    const marker = bytes[offset++]!;
    // Markers without a length: TEM and RST0-7.
    if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) continue;
    if (marker === 0xd9 || marker === 0xda) return { ok: false, problem: `a JPEG whose ${marker === 0xd9 ? 'end of image' : 'scan'} comes at ${offset - 2} before any start of frame (SOFn), which states its size` };
    if (offset + 2 > bytes.byteLength) break;
    const length = (bytes[offset]! << 8) | bytes[offset + 1]!;
    if (length < 2 || offset + length > bytes.byteLength) return { ok: false, problem: `a JPEG whose segment ${hex(marker)} at ${offset - 2} claims ${length} bytes, ${length < 2 ? 'less than its own length field' : `but only ${bytes.byteLength - offset} remain (truncated?)`}` };
    // SOF0-15 but DHT (C4), JPG (C8) and DAC (CC): precision (1), height (2), width (2).
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      if (length < 7) return { ok: false, problem: `a JPEG whose start of frame at ${offset - 2} is ${length} bytes, too short for its dimensions` };
      const height = (bytes[offset + 3]! << 8) | bytes[offset + 4]!;
      const width = (bytes[offset + 5]! << 8) | bytes[offset + 6]!;
      // A height of 0 is allowed by T.81 (given later by a DNL marker), but not a width.
      if (width === 0) return { ok: false, problem: `a JPEG whose start of frame states a width of 0` };
      return { ok: true, info: { format: 'jpeg', width, height } };
    }
    offset += length;
  }
  return { ok: false, problem: `a JPEG cut off at ${bytes.byteLength} bytes before any start of frame (SOFn), which states its size` };
}

function hex(byte: number): string {
  return byte.toString(16).toUpperCase().padStart(2, '0');
}
