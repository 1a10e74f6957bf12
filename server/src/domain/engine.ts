// The generation engine, as the domain sees it: the port the job runner hands jobs to
// and the files route reads artifacts from. engine/ holds the built-in adapter.
import type { Job, JobError, JobResult } from './model.ts';

export type EngineOutcome = { status: 'ready'; result: JobResult } | { status: 'failed'; error: JobError };

export interface Artifact {
  contentType: string;
  body: Uint8Array;
}

/** A file of a ready job, as files.ts asks the engine for it. */
export interface ArtifactRequest {
  job: Job;
  /** The file's name in its URL: `preview.png`, `video.mp4` or `captions.vtt` (files.ts). */
  name: string;
  /** For a video's picture, the job of its avatar (whose portrait speaks); null otherwise, or when it is gone. */
  avatar: Job | null;
}

/**
 * The engine could not make a ready job's file. `retryable` when it may shortly (it is busy);
 * otherwise something is wrong with the engine (its encoder is missing, say). The HTTP
 * layer answers 503 or 500 and logs the message, which is for operators, not clients.
 */
export class ArtifactUnavailableError extends Error {
  override name = 'ArtifactUnavailableError';
  readonly retryable: boolean;

  constructor(message: string, options: { retryable?: boolean; cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.retryable = options.retryable ?? false;
  }
}

/**
 * What produces avatars and videos. The worker hands it one job at a time; a real
 * engine would call a model, the built-in one stands in for it.
 */
export interface GenerationEngine {
  /** Produces the job's result, or says why it failed. Stops early when `signal` aborts. */
  generate(job: Job, signal: AbortSignal): Promise<EngineOutcome>;
  /** A file of a ready job: what preview_image_url, video_url or captions_url serve; null when there is none. */
  artifact(request: ArtifactRequest): Promise<Artifact | null>;
  /** Lets go of what the engine holds (threads, caches); called once the service has stopped using it. */
  close?(): Promise<void>;
}
