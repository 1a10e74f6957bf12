// Videos made before a job kept its file: their MP4 was rendered on each download, and
// after the upgrade to kept files their video_url found nothing (404). The upgrade's
// migration lists the ready videos of that time; a worker makes each one's MP4 again, as
// its job did (generation.ts), keeps it, and takes it off the list, so that no ready video
// of an upgraded store is left without its file. A download never renders: until its file
// is made again, such a video's link answers as a file not kept does.
import type { DomainDeps } from './deps.ts';
import type { GenerationEngine } from './engine.ts';
import { FILE_NAME } from './files.ts';
import type { VideoInput } from './model.ts';

/** Videos read from the list at a time: a page of IDs, each then made one after the other. */
const BATCH = 50;

export interface RestoreOutcome {
  /** Videos whose MP4 was made again and kept. */
  restored: number;
  /** Videos listed that needed nothing: their file was kept already, or they are no ready video. */
  unneeded: number;
  /** Videos whose MP4 could not be made or kept, with why: left on the list for the next start. */
  failed: { jobId: string; error: unknown }[];
}

/**
 * Makes again and keeps the MP4 of every ready video the upgrade listed; stops early when
 * `signal` aborts (a video under way is left on the list). One at a time: the engine's
 * render slots are the new jobs' too, and a restore must not starve them.
 */
export async function restoreKeptFiles(deps: Pick<DomainDeps, 'store'>, engine: Pick<GenerationEngine, 'generate'>, signal: AbortSignal): Promise<RestoreOutcome> {
  const outcome: RestoreOutcome = { restored: 0, unneeded: 0, failed: [] };
  const failed = new Set<string>();
  for (;;) {
    signal.throwIfAborted();
    // A video that failed stays listed: the pages read past it.
    const listed = (await deps.store.files.filesToRestore(BATCH + failed.size)).filter((id) => !failed.has(id));
    if (listed.length === 0) return outcome;
    for (const jobId of listed) {
      signal.throwIfAborted();
      try {
        if (await restoreOne(deps, engine, jobId, signal)) outcome.restored++;
        else outcome.unneeded++;
        await deps.store.files.fileRestored(jobId);
      } catch (error) {
        if (signal.aborted) throw error;
        failed.add(jobId);
        outcome.failed.push({ jobId, error });
      }
    }
  }
}

/** True when the video's MP4 was made and kept now; false when it needed none. */
async function restoreOne(deps: Pick<DomainDeps, 'store'>, engine: Pick<GenerationEngine, 'generate'>, jobId: string, signal: AbortSignal): Promise<boolean> {
  const job = await deps.store.jobs.getJob(jobId);
  if (!job || job.kind !== 'avatar_video' || job.status !== 'ready') return false;
  if (await deps.store.files.getFile(job.id, FILE_NAME.avatar_video)) return false;
  const avatar = await deps.store.jobs.getJob((job.input as VideoInput).avatar_id);
  const made = await engine.generate(job, signal, { avatar });
  try {
    const mp4 = made.status === 'ready' ? made.files?.find((file) => file.name === FILE_NAME.avatar_video) : undefined;
    if (!mp4) throw new Error(`the engine made no ${FILE_NAME.avatar_video} of ready video ${job.id} (${made.status})`);
    await deps.store.files.putFile(job.id, mp4.name, mp4.contentType, mp4.read());
  } finally {
    if (made.status === 'ready') await made.discard?.();
  }
  return true;
}
