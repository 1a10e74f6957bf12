// The files the run's records link to, downloaded once a run and shared by the checks
// that judge them (ctx.once): the ready video's MP4, read through the member the
// implementation profile names (files.video, the source's video_url by default). The
// record the run's polling saw ready is used; it is read again only where its link fails,
// since a service may renew its links on each read (and a run's reads are counted).
import type { CheckContext } from '../context.ts';
import { at, type Json } from '../implementation/profile.ts';
import type { KeyName } from '../http.ts';
import { download, type DownloadOptions, type Fetched } from '../observe/download.ts';
import { readMp4, type Mp4Reading } from '../observe/mp4.ts';
import { PrerequisiteError } from '../outcome.ts';
import type { TrackedJob } from '../world.ts';
import { isJson } from '../world.ts';

/**
 * How far a duration the record states may be from the MP4's own. A container's duration is
 * its longest track's: AAC audio comes in frames of 1,024 samples (21-23 ms at 44.1-48 kHz),
 * an encoder pads the last and primes the first with some 2,112 samples (about 48 ms), and
 * a record may state the length of the speech or of the picture alone; a quarter second
 * covers those and a few frames at 25 fps, and still tells another file apart from the
 * run's, whose 15-word script takes seconds.
 */
export const DURATION_TOLERANCE_SECONDS = 0.25;

export interface LinkedRecord {
  job: TrackedJob;
  /** The record the run's polling saw ready, or the one read again for a fresh link. */
  record: Json;
  /** The record's GET. */
  path: string;
}

/** A file a record links to: where it points (resolved against the record's URL) and what downloading it gave. */
export interface LinkedFile extends LinkedRecord {
  /** The link as the record states it. */
  link: string;
  url: string;
  fetched: Fetched;
}

/** The run's ready video and its MP4, downloaded once: the same for every check of a run. */
export function videoFile(ctx: CheckContext): Promise<LinkedFile & { mp4: Mp4Reading | undefined }> {
  return ctx.once('files:video', async () => {
    const linked = await readyRecord(ctx, 'video');
    const file = await fetchLinked(ctx, linked, ctx.shape.profile.files.video, 'video_url');
    const mp4 = file.fetched.ok && file.fetched.download.status === 200 && !file.fetched.download.cut ? readMp4(file.fetched.download.body) : undefined;
    return { ...file, mp4 };
  });
}

/** The run's ready avatar (the one its videos are made of). */
export function avatarRecord(ctx: CheckContext): Promise<LinkedRecord> {
  return ctx.once('files:avatar', () => readyRecord(ctx, 'avatar'));
}

/** The record the run's polling saw ready: reading it again costs a read, spent only where a link fails (fetchLinked). */
async function readyRecord(ctx: CheckContext, kind: 'avatar' | 'video'): Promise<LinkedRecord> {
  const job = kind === 'video' ? await ctx.world.video() : await ctx.world.readyAvatar();
  const seen = await job.settled;
  if (job.ended !== 'ready') throw new PrerequisiteError(`the run's ${kind} ended ${String(ctx.shape.state(seen))}, not ready: ${JSON.stringify(seen.error)}`);
  return { job, record: seen, path: `${kind === 'video' ? '/v1/avatar-videos' : '/v1/avatars'}/${job.id!}` };
}

/** The record read again: a service may renew its links on each read. */
async function readAgain(ctx: CheckContext, linked: LinkedRecord): Promise<LinkedRecord> {
  const again = await ctx.http.send({ key: linked.job.key, method: 'GET', path: linked.path, note: 'the ready record read again for a fresh file link' });
  if (again.status !== 200 || !isJson(again.json)) return linked;
  const now = ctx.shape.state(again.json);
  // A record that left ready owes no file: states.terminal-never-changes judges the change.
  if (ctx.shape.terminal(now) !== 'ready') throw new PrerequisiteError(`${linked.path}, ready before, now reads ${String(now)}`);
  return { ...linked, record: again.json };
}

/**
 * Downloads the file at `pointer` of a record; a record without a link there is the
 * prerequisite missing. A link that does not answer with the file is given a second
 * chance: its record is read again, and a link renewed by that read is downloaded instead
 * (the one the run's polling saw may have expired since).
 */
export async function fetchLinked(ctx: CheckContext, linked: LinkedRecord, pointer: string, name: string): Promise<LinkedFile> {
  const first = await fetchOnce(ctx, linked, pointer, name);
  if (first.fetched.ok && first.fetched.download.status < 300) return first;
  const fresh = await readAgain(ctx, linked);
  if (at(fresh.record, pointer) === first.link) return { ...first, record: fresh.record };
  return fetchOnce(ctx, fresh, pointer, name);
}

async function fetchOnce(ctx: CheckContext, linked: LinkedRecord, pointer: string, name: string): Promise<LinkedFile> {
  const link = at(linked.record, pointer);
  if (typeof link !== 'string' || link === '') throw new PrerequisiteError(`the ready record ${linked.job.id!} has no ${name} to download at ${pointer || '(the record)'}: ${JSON.stringify(link) ?? 'absent'}`);
  let url: string;
  try {
    // A link may be relative: to the record's own URL, as a browser resolves it.
    url = new URL(link, ctx.http.baseUrl + linked.path).href;
  } catch {
    url = link;
  }
  const fetched = await download(url, downloadOptions(ctx, linked.job.key, undefined));
  return { ...linked, link, url, fetched };
}

/** Downloads `url` again with other request headers (a byte range), as the shared download did. */
export function fetchAgain(ctx: CheckContext, file: LinkedFile, headers: Record<string, string>): Promise<Fetched> {
  return download(file.url, downloadOptions(ctx, file.job.key, headers));
}

function downloadOptions(ctx: CheckContext, key: KeyName, headers: Record<string, string> | undefined): DownloadOptions {
  const token = ctx.http.token(key);
  return {
    ...(headers ? { headers } : {}),
    apiOrigin: new URL(ctx.http.baseUrl).origin,
    credential: token === undefined ? undefined : ctx.shape.credential(token),
    timeoutMs: ctx.options.requestTimeoutMs,
    signal: ctx.deadline.signal,
  };
}

/** The file's duration: the presentation's, else its longest track's; null where it states none. */
export function fileDuration(mp4: Mp4Reading | undefined): number | null {
  if (!mp4?.ok) return null;
  if (mp4.info.durationSeconds !== null) return mp4.info.durationSeconds;
  const tracks = mp4.info.tracks.map((track) => track.durationSeconds).filter((seconds): seconds is number => seconds !== null);
  return tracks.length > 0 ? Math.max(...tracks) : null;
}
