// The files behind preview_image_url, video_url and captions_url. Like a CDN URL they
// need no key: the unguessable job ID in the path is the capability. A file the job made
// (a video's MP4) is read from the store, never made again; the others (a preview, the
// captions) the engine makes from the job's inputs.
import type { Artifact, GenerationEngine } from './engine.ts';
import type { StoredFile } from './ports.ts';
import { isJobId } from './ids.ts';
import type { DomainDeps } from './deps.ts';
import type { JobKind, VideoInput } from './model.ts';

/** The name each kind of job serves its main file under (in its URL, see serialize.ts). */
export const FILE_NAME = { avatar: 'preview.png', avatar_video: 'video.mp4' } as const;
/** A video's captions, beside its MP4 (WebVTT). */
export const CAPTIONS_FILE_NAME = 'captions.vtt';

/** Every file a ready job of each kind serves. */
const FILE_NAMES: Record<JobKind, readonly string[]> = { avatar: [FILE_NAME.avatar], avatar_video: [FILE_NAME.avatar_video, CAPTIONS_FILE_NAME] };

/**
 * The file `name` of job `id`, or null when there is none (a 404 like any unknown path):
 * the one the job made and the store keeps, or else the one the engine makes on request.
 */
export async function readJobFile(deps: DomainDeps, engine: Pick<GenerationEngine, 'artifact'>, id: string, name: string): Promise<Artifact | StoredFile | null> {
  if (!isJobId('avatar', id) && !isJobId('avatar_video', id)) return null;
  const job = await deps.store.jobs.getJob(id);
  if (!job || job.status !== 'ready' || !FILE_NAMES[job.kind].includes(name)) return null;
  const kept = await deps.store.files.getFile(job.id, name);
  if (kept) return kept;
  const avatar = name === FILE_NAME.avatar_video ? await deps.store.jobs.getJob((job.input as VideoInput).avatar_id) : null;
  return engine.artifact({ job, name, avatar });
}
