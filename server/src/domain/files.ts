// The files behind preview_image_url and video_url. Like a CDN URL they need no key: the
// unguessable job ID in the path is the capability.
import type { Artifact, GenerationEngine } from './engine.ts';
import { isJobId } from './ids.ts';
import type { DomainDeps } from './deps.ts';

/** The name each kind of job serves its file under (in its URL, see serialize.ts). */
export const FILE_NAME = { avatar: 'preview.png', avatar_video: 'video.mp4' } as const;

/** The file `name` of job `id`, or null when there is none (a 404 like any unknown path). */
export async function readJobFile(deps: DomainDeps, engine: Pick<GenerationEngine, 'artifact'>, id: string, name: string): Promise<Artifact | null> {
  if (!isJobId('avatar', id) && !isJobId('avatar_video', id)) return null;
  const job = await deps.store.jobs.getJob(id);
  return job && FILE_NAME[job.kind] === name ? engine.artifact(job) : null;
}
