// The generation engine, as the domain sees it: the port the job runner hands jobs to
// and the files route reads artifacts from. engine/ holds the built-in adapter.
import type { Job, JobError, JobResult } from './model.ts';

export type EngineOutcome = { status: 'ready'; result: JobResult } | { status: 'failed'; error: JobError };

export interface Artifact {
  contentType: string;
  body: Uint8Array;
}

/**
 * What produces avatars and videos. The worker hands it one job at a time; a real
 * engine would call a model, the built-in one stands in for it.
 */
export interface GenerationEngine {
  /** Produces the job's result, or says why it failed. Stops early when `signal` aborts. */
  generate(job: Job, signal: AbortSignal): Promise<EngineOutcome>;
  /** The file behind a ready job's preview_image_url or video_url. */
  artifact(job: Job): Promise<Artifact | null>;
  /** Lets go of what the engine holds (threads, caches); called once the service has stopped using it. */
  close?(): Promise<void>;
}
