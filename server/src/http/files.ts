// Sends a job's file: the whole of it, or the single byte range asked for (RFC 9110,
// section 14), which is how a media player fetches a video it seeks in. A file never
// changes once made, so it may be kept by any cache for good. A file the store keeps is
// streamed from it, never read whole into memory.
import { Readable } from 'node:stream';
import type { Artifact } from '../domain/engine.ts';
import type { StoredFile } from '../domain/ports.ts';
import type { AppContext } from './state.ts';

/**
 * The bytes [start, end] of a file of `size` that a `Range` header asks for, or null to
 * send the whole file: no header, another unit, several ranges, or one that is malformed
 * or past the end (a server may ignore any Range header; answering with the whole file
 * spares clients a 416 they rarely handle).
 */
export function byteRange(header: string | undefined, size: number): { start: number; end: number } | null {
  const match = header?.trim().match(/^bytes=(\d*)-(\d*)$/u);
  if (!match || size === 0) return null;
  const [, first = '', last = ''] = match;
  if (first === '') {
    const suffix = Number(last);
    return last !== '' && suffix > 0 ? { start: Math.max(0, size - suffix), end: size - 1 } : null;
  }
  const start = Number(first);
  const end = last === '' ? size - 1 : Math.min(Number(last), size - 1);
  return start < size && start <= end ? { start, end } : null;
}

export function sendFile(ctx: AppContext, file: Artifact | StoredFile): void {
  const size = 'body' in file ? file.body.byteLength : file.size;
  ctx.type = file.contentType;
  ctx.set('Cache-Control', 'public, max-age=31536000, immutable');
  ctx.set('Accept-Ranges', 'bytes');
  const range = byteRange(ctx.get('Range') || undefined, size);
  const { start, end } = range ?? { start: 0, end: size - 1 };
  if (range) {
    ctx.status = 206;
    ctx.set('Content-Range', `bytes ${start}-${end}/${size}`);
  }
  if ('body' in file) {
    ctx.body = Buffer.from(file.body.buffer, file.body.byteOffset, file.body.byteLength).subarray(start, end + 1);
    return;
  }
  // An empty file has no range to read.
  ctx.body = size === 0 ? Buffer.alloc(0) : Readable.from(file.read(start, end));
  ctx.length = end - start + 1;
}
