// The files behind preview_image_url, video_url and captions_url. Like a presigned URL
// they need no key: the link's signature and expiry are the capability (fileLinks.ts),
// and the unguessable job ID in its path keeps it one link of one file. A file the job made
// (a video's MP4) is read from the store, never made again; the others (a preview, the
// captions) the engine makes from the job's inputs. What a request for one is answered
// (the whole file, or the byte range it asks for, and the headers that say which) is
// fileAnswer's, sent by the server's route and by the MSW mock alike.
import { createHash } from 'node:crypto';
import type { Artifact, GenerationEngine } from './engine.ts';
import type { StoredFile } from './ports.ts';
import { isJobId } from './ids.ts';
import type { DomainDeps } from './deps.ts';
import { refuseExpired, verifyFileLink } from './fileLinks.ts';
import type { Job, JobKind, VideoInput } from './model.ts';

/** The name each kind of job serves its main file under (in its URL, see serialize.ts). */
export const FILE_NAME = { avatar: 'preview.png', avatar_video: 'video.mp4' } as const;
/** A video's captions, beside its MP4 (WebVTT). */
export const CAPTIONS_FILE_NAME = 'captions.vtt';

/** The seconds a cache may keep a file read through `linked`: until its link expires. */
export function linkedMaxAgeSeconds(linked: LinkedFile): number | undefined {
  return linked.expiresAtMs === null ? undefined : (linked.expiresAtMs - linked.accountNowMs) / 1000;
}

/** Every file a ready job of each kind serves. */
const FILE_NAMES: Record<JobKind, readonly string[]> = { avatar: [FILE_NAME.avatar], avatar_video: [FILE_NAME.avatar_video, CAPTIONS_FILE_NAME] };

/** A file read through its link: the file, and when (the account's time) the link stops serving it, if it is signed. */
export interface LinkedFile {
  file: Artifact | StoredFile;
  expiresAtMs: number | null;
  accountNowMs: number;
}

/**
 * The file `name` of job `id` that a link of `path` and `query` asks for, or null when
 * there is none (a 404 like any unknown path): the one the job made and the store keeps,
 * or else the one the engine makes on request. The link is checked first: an altered one
 * throws `file_link_invalid` before anything is looked up, an expired one (on its
 * account's time, ND-FILE-LINKS) `file_link_expired`.
 */
export async function readLinkedFile(
  deps: DomainDeps,
  engine: Pick<GenerationEngine, 'artifact'>,
  id: string,
  name: string,
  path: string,
  query: URLSearchParams,
): Promise<LinkedFile | null> {
  const claim = verifyFileLink(deps.fileLinkKey, path, query);
  if (!isJobId('avatar', id) && !isJobId('avatar_video', id)) return null;
  const job = await deps.store.jobs.getJob(id);
  if (!job || job.status !== 'ready' || !FILE_NAMES[job.kind].includes(name)) return null;
  // Only a signed link's expiry is on the account's time, which only its account knows.
  const serviceNow = deps.clock.now();
  const account = claim.signed ? await deps.store.accounts.getAccount(job.accountId) : null;
  const accountNowMs = serviceNow + (account?.clockOffsetMs ?? 0);
  refuseExpired(claim, accountNowMs, serviceNow);
  const file = await readJobFile(deps, engine, job, name);
  return file && { file, expiresAtMs: claim.signed ? claim.expiresAtMs : null, accountNowMs };
}

/** The file `name` of a ready `job`: the one the job made and the store keeps, or else the one the engine makes on request. */
async function readJobFile(deps: DomainDeps, engine: Pick<GenerationEngine, 'artifact'>, job: Job, name: string): Promise<Artifact | StoredFile | null> {
  const kept = await deps.store.files.getFile(job.id, name);
  if (kept) return kept;
  const avatar = name === FILE_NAME.avatar_video ? await deps.store.jobs.getJob((job.input as VideoInput).avatar_id) : null;
  return engine.artifact({ job, name, avatar });
}

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

/** What a file's answer is: its status, its headers but the Content-Type, and the bytes [start, end] of `size` to send. */
export interface FileAnswer {
  status: 200 | 206;
  headers: Record<string, string>;
  start: number;
  end: number;
  size: number;
}

/** How long a cache may keep a file whose link has no expiry: a year, the most RFC 9111 caches are asked to keep anything. */
const UNEXPIRING_MAX_AGE_SECONDS = 31_536_000;

/**
 * The answer to a request for a ready job's file at `path`: the range its `Range` header
 * asks for (206, with Content-Range) when `If-Range` lets it be sent, else the whole file
 * (200). A file never changes once made, so a cache may keep it as long as its link
 * lives (`maxAgeSeconds`), and no longer: a link past its expiry must be refused.
 */
export function fileAnswer(
  path: string,
  file: Artifact | StoredFile,
  range: string | undefined,
  ifRange: string | undefined,
  maxAgeSeconds: number = UNEXPIRING_MAX_AGE_SECONDS,
): FileAnswer {
  const size = 'body' in file ? file.body.byteLength : file.size;
  const etag = fileTag(path, file);
  const maxAge = Math.max(0, Math.min(UNEXPIRING_MAX_AGE_SECONDS, Math.floor(maxAgeSeconds)));
  const headers: Record<string, string> = { 'Cache-Control': `public, max-age=${maxAge}, immutable`, 'Accept-Ranges': 'bytes', ETag: etag };
  const asked = rangeApplies(ifRange, etag) ? byteRange(range, size) : null;
  if (!asked) return { status: 200, headers, start: 0, end: size - 1, size };
  headers['Content-Range'] = `bytes ${asked.start}-${asked.end}/${size}`;
  return { status: 206, headers, ...asked, size };
}
