// The generation engine, as the domain sees it: the port the job runner hands jobs to
// and the files route reads artifacts from. engine/ holds the built-in adapter.
import type { Job, JobError, JobResult } from './model.ts';

/**
 * A file the engine made for a job (a video's MP4): kept by the store before the job is
 * `ready` (generation.ts), so that its URL serves it from every API process at once.
 */
export interface MadeFile {
  /** Its name in its URL (files.ts). */
  name: string;
  contentType: string;
  /** Its bytes, read once, in pieces. */
  read(): AsyncIterable<Uint8Array>;
}

export type EngineOutcome =
  | {
      status: 'ready';
      result: JobResult;
      /** Files to keep before the job is ready. */
      files?: MadeFile[];
      /** Lets go of what the files were made in (a temporary folder), once they are kept or given up. */
      discard?: () => Promise<void>;
    }
  | { status: 'failed'; error: JobError };

/** What a job's generation reads besides the job: for a video, the job of its avatar (null when it is gone). */
export interface GenerationInputs {
  avatar: Job | null;
  /**
   * Called once the job needs no more rendering: its render is done, or it has none (an
   * avatar, a video that fails without one). The job runner holds an account's next video
   * back while one renders (fairness); from here on, the rest of this job (the engine's
   * wait, keeping the file) does not keep the account's next video waiting. An engine
   * that never calls it holds the account until the job ends.
   */
  rendered?: () => void;
}

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
 * The engine could not make a ready job's file on request. `retryable` when it may shortly (it is busy);
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
  /**
   * Produces the job's result and its files, or says why it failed; throws when it could
   * not make them (the job fails as generation_failed). Stops early when `signal` aborts.
   */
  generate(job: Job, signal: AbortSignal, inputs?: GenerationInputs): Promise<EngineOutcome>;
  /**
   * A file of a ready job that the store does not keep (a preview, captions): made from
   * the job's inputs alone; null when there is none. Files the job made are read from the
   * store, never made again.
   */
  artifact(request: ArtifactRequest): Promise<Artifact | null>;
  /** Lets go of what the engine holds (threads, caches); called once the service has stopped using it. */
  close?(): Promise<void>;
}
