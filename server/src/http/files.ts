// Sends a job's file: the whole of it, or the single byte range asked for (RFC 9110,
// section 14), which is how a media player fetches a video it seeks in. A file never
// changes once made, so it may be kept by any cache for good. A file the store keeps is
// streamed from it, never read whole into memory.
//
// A range is sent only of the file the client already holds part of: with `If-Range`
// (RFC 9110, section 13.1.5) a client that names another validator gets the whole file, so
// it never splices the bytes of two different files.
import { createHash } from 'node:crypto';
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

/**
 * The file's entity tag, a strong validator (RFC 9110, section 8.8.3): a file the store
 * keeps is written once under its URL and never again, so its URL and size name its bytes;
 * one the engine makes on request (a preview, captions) is named by its bytes' digest, so
 * that a change of the engine's drawing makes another tag rather than another file under
 * the same one.
 */
export function fileTag(path: string, file: Artifact | StoredFile): string {
  const hash = createHash('sha256');
  if ('body' in file) hash.update(file.body);
  else hash.update(`${path}\n${file.size}`);
  return `"${hash.digest('base64url').slice(0, 27)}"`;
}

/**
 * Whether a Range request's `If-Range` lets its range be sent (RFC 9110, section 13.1.5):
 * no `If-Range`, or one naming the file's current validator. An entity tag matches by the
 * strong comparison (a weak tag never does); a date would have to equal the file's
 * Last-Modified, which this server does not send (a file's date differs between the
 * processes that serve it, so it could be no strong validator), so a date never matches.
 */
export function rangeApplies(ifRange: string | undefined, etag: string): boolean {
  if (ifRange === undefined) return true;
  const value = ifRange.trim();
  return value.startsWith('"') && value === etag;
}

export function sendFile(ctx: AppContext, file: Artifact | StoredFile): void {
  const size = 'body' in file ? file.body.byteLength : file.size;
  const etag = fileTag(ctx.path, file);
  ctx.type = file.contentType;
  ctx.set('Cache-Control', 'public, max-age=31536000, immutable');
  ctx.set('Accept-Ranges', 'bytes');
  ctx.set('ETag', etag);
  const range = rangeApplies(ctx.get('If-Range') || undefined, etag) ? byteRange(ctx.get('Range') || undefined, size) : null;
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
