// The built-in engine: a stand-in for a real model. It takes a configurable time,
// fails deterministically on the sandbox marker, and serves files that really exist:
// an avatar's preview is a portrait drawn from its inputs (portrait.ts); a video is that
// portrait speaking its script, with the script as captions, in the frame it asked for
// (video.ts), and its captions are also served as WebVTT. Both are made off the event
// loop on first download, from the inputs alone (so any API process makes the same
// file), and kept.
import { LRUCache } from 'lru-cache';
import { setTimeout as sleep } from 'node:timers/promises';
import type { AvatarInput, Job, VideoInput } from '../domain/model.ts';
import { SANDBOX_FAILURE_MARKER } from '../../../contract/sandbox.ts';
import type { Artifact, ArtifactRequest, EngineOutcome, GenerationEngine } from '../domain/engine.ts';
import { CAPTIONS_FILE_NAME, FILE_NAME } from '../domain/files.ts';
import { createPortraits } from './portraits.ts';
import { videoDurationSeconds, webVtt } from './timeline.ts';
import { createVideos } from './videos.ts';

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

function triggersFailure(job: Job): boolean {
  if (!job.sandbox) return false;
  const text = job.kind === 'avatar' ? (job.input as AvatarInput).name : (job.input as VideoInput).script;
  return text.includes(SANDBOX_FAILURE_MARKER);
}

/** Rendered previews kept: about 15 KB each, some 12 MB in all. */
const KEPT_PREVIEWS = 800;
/** Bytes of rendered videos kept: a 30-second 9:16 video is about 1.6 MB, a 7-second one 360 KB. */
const KEPT_VIDEO_BYTES = 32 * 1024 * 1024;

/** The avatar drawn for a video whose avatar cannot be read (never the case while the store keeps avatars). */
const unknownAvatar = (video: VideoInput): AvatarInput => ({ type: 'prompt', name: '', prompt: video.avatar_id });

export function createBuiltinEngine(options: BuiltinEngineOptions): GenerationEngine {
  const portraits = createPortraits();
  const videos = createVideos();
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
  // Videos likewise, bounded by their size; a render is shared until it is kept.
  const rendered = new LRUCache<string, Buffer>({ maxSize: KEPT_VIDEO_BYTES, sizeCalculation: (mp4) => mp4.byteLength });
  const rendering = new Map<string, Promise<Buffer>>();
  const mp4 = (job: Job, avatar: Job | null): Promise<Buffer> => {
    const kept = rendered.get(job.id);
    if (kept) return Promise.resolve(kept);
    let render = rendering.get(job.id);
    if (!render) {
      const video = job.input as VideoInput;
      render = videos
        .mp4({ avatar: (avatar?.input as AvatarInput | undefined) ?? unknownAvatar(video), video })
        .then((bytes) => {
          rendered.set(job.id, bytes);
          return bytes;
        })
        .finally(() => rendering.delete(job.id));
      rendering.set(job.id, render);
    }
    return render;
  };
  return {
    async generate(job, signal): Promise<EngineOutcome> {
      const ms = job.kind === 'avatar' ? options.avatarMs : options.videoMs;
      if (ms > 0) await (options.wait ?? serviceTime)(job, ms, signal);
      if (triggersFailure(job)) {
        return { status: 'failed', error: { code: 'sandbox_forced_failure', message: `The request contains the sandbox failure marker ${SANDBOX_FAILURE_MARKER}.` } };
      }
      if (job.kind === 'avatar') return { status: 'ready', result: {} };
      // The length the file will have, to the frame, stated without rendering it.
      return { status: 'ready', result: { duration_seconds: videoDurationSeconds((job.input as VideoInput).script) } };
    },
    async artifact({ job, name, avatar }: ArtifactRequest): Promise<Artifact | null> {
      if (job.kind === 'avatar') return name === FILE_NAME.avatar ? { contentType: 'image/png', body: await preview(job) } : null;
      if (name === CAPTIONS_FILE_NAME) return { contentType: 'text/vtt; charset=utf-8', body: Buffer.from(webVtt((job.input as VideoInput).script)) };
      return name === FILE_NAME.avatar_video ? { contentType: 'video/mp4', body: await mp4(job, avatar) } : null;
    },
    close: async () => {
      await Promise.all([portraits.close(), videos.close()]);
    },
  };
}
