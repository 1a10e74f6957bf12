// Sends a job's file: the whole of it, or the single byte range asked for (RFC 9110,
// section 14), which is how a media player fetches a video it seeks in. What is sent (the
// status, the range, the headers) is the domain's fileAnswer, which the MSW mock sends
// too; here it is written to Koa's response. The link was checked before (readLinkedFile). A file the store keeps is streamed from it,
// never read whole into memory.
import { Readable } from 'node:stream';
import { fileAnswer, linkedMaxAgeSeconds, type LinkedFile } from '../domain/files.ts';
import type { AppContext } from './state.ts';

export { byteRange, fileTag, rangeApplies } from '../domain/files.ts';

/** Sends the file a link reached; a cache may keep it until the link expires. */
export function sendFile(ctx: AppContext, linked: LinkedFile): void {
  const { file } = linked;
  const { status, headers, start, end, size } = fileAnswer(ctx.path, file, ctx.get('Range') || undefined, ctx.get('If-Range') || undefined, linkedMaxAgeSeconds(linked));
  ctx.type = file.contentType;
  ctx.status = status;
  ctx.set(headers);
  if ('body' in file) {
    ctx.body = Buffer.from(file.body.buffer, file.body.byteOffset, file.body.byteLength).subarray(start, end + 1);
    return;
  }
  // An empty file has no range to read.
  ctx.body = size === 0 ? Buffer.alloc(0) : Readable.from(file.read(start, end));
  ctx.length = end - start + 1;
}
