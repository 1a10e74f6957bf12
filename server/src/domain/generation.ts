// A job's generation: what the engine makes of it, and the files it made kept by the
// store before the outcome is recorded. A video is `ready` only once its MP4 is kept where
// every API process reads it; a file that cannot be kept fails the job like an engine
// that could not make it (the caller's failure path: credits released, webhook sent).
import type { DomainDeps } from './deps.ts';
import type { EngineOutcome, GenerationEngine } from './engine.ts';
import type { Job, VideoInput } from './model.ts';

/** The job's outcome, its files kept; throws when the engine or the store could not make or keep them. */
export async function generateJob(deps: DomainDeps, engine: GenerationEngine, job: Job, signal: AbortSignal, rendered?: () => void): Promise<EngineOutcome> {
  // A video's picture is its avatar's portrait: the engine reads that job's inputs.
  const avatar = job.kind === 'avatar_video' ? await deps.store.jobs.getJob((job.input as VideoInput).avatar_id) : null;
  const outcome = await engine.generate(job, signal, { avatar, rendered });
  if (outcome.status !== 'ready') return outcome;
  try {
    for (const file of outcome.files ?? []) {
      signal.throwIfAborted();
      await deps.store.files.putFile(job.id, file.name, file.contentType, file.read());
    }
  } finally {
    await outcome.discard?.();
  }
  return { status: 'ready', result: outcome.result };
}
