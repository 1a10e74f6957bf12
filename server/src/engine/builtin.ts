// The built-in engine: a stand-in for a real model. It takes a configurable time,
// fails deterministically on the sandbox marker, and serves files that really exist:
// an avatar's preview is a portrait drawn from its inputs (portrait.ts), rendered off the
// event loop and kept once made.
import { readFileSync } from 'node:fs';
import { LRUCache } from 'lru-cache';
import { setTimeout as sleep } from 'node:timers/promises';
import type { AvatarInput, Job, VideoInput } from '../domain/model.ts';
import { SANDBOX_FAILURE_MARKER } from '../../../contract/sandbox.ts';
import type { Artifact, EngineOutcome, GenerationEngine } from '../domain/engine.ts';
import { createPortraits } from './portraits.ts';

export interface BuiltinEngineOptions {
  /** Milliseconds an avatar takes; 0 for no work at all. */
  avatarMs: number;
  /** Milliseconds a video takes. */
  videoMs: number;
  /**
   * How the work's time passes; by default the service's own time. The service passes a
   * wait on the account's time, so a sandbox clock moved past the end finishes the job.
   */
  wait?: (job: Job, ms: number, signal: AbortSignal) => Promise<void>;
}

const serviceTime = (_job: Job, ms: number, signal: AbortSignal) => sleep(ms, undefined, { signal });

/** A one-second H.264 clip generated once with ffmpeg; every video of the built-in engine is this file. */
const SAMPLE_VIDEO = new URL('../../assets/sample.mp4', import.meta.url);
/** Speaking pace used to estimate a video's length from its script. */
const WORDS_PER_SECOND = 2.5;

function triggersFailure(job: Job): boolean {
  if (!job.sandbox) return false;
  const text = job.kind === 'avatar' ? (job.input as AvatarInput).name : (job.input as VideoInput).script;
  return text.includes(SANDBOX_FAILURE_MARKER);
}

/** Rendered previews kept: about 15 KB each, some 12 MB in all. */
const KEPT_PREVIEWS = 800;

export function createBuiltinEngine(options: BuiltinEngineOptions): GenerationEngine {
  let video: Buffer | null = null;
  const portraits = createPortraits();
  // The same inputs always give the same portrait, so one made is kept; a render in
  // progress is shared by the requests that ask for it meanwhile.
  const previews = new LRUCache<string, Promise<Buffer>>({ max: KEPT_PREVIEWS });
  const preview = (job: Job): Promise<Buffer> => {
    let png = previews.get(job.id);
    if (!png) {
      png = portraits.png(job.input as AvatarInput);
      previews.set(job.id, png);
      png.catch(() => previews.delete(job.id));
    }
    return png;
  };
  return {
    async generate(job, signal): Promise<EngineOutcome> {
      const ms = job.kind === 'avatar' ? options.avatarMs : options.videoMs;
      if (ms > 0) await (options.wait ?? serviceTime)(job, ms, signal);
      if (triggersFailure(job)) {
        return { status: 'failed', error: { code: 'sandbox_forced_failure', message: `The request contains the sandbox failure marker ${SANDBOX_FAILURE_MARKER}.` } };
      }
      if (job.kind === 'avatar') return { status: 'ready', result: {} };
      const words = (job.input as VideoInput).script.trim().split(/\s+/).length;
      return { status: 'ready', result: { duration_seconds: Math.max(1, Math.round((words / WORDS_PER_SECOND) * 10) / 10) } };
    },
    async artifact(job): Promise<Artifact | null> {
      if (job.status !== 'ready') return null;
      if (job.kind === 'avatar') return { contentType: 'image/png', body: await preview(job) };
      video ??= readFileSync(SAMPLE_VIDEO);
      return { contentType: 'video/mp4', body: video };
    },
    close: () => portraits.close(),
  };
}
