// The built-in engine: a stand-in for a real model. It takes a configurable time,
// fails deterministically on the sandbox marker, and makes files that really exist:
// a video is its avatar's portrait speaking its script, with the script as captions, in
// the frame it asked for (video.ts), rendered by the job while it is processing (fairly
// between accounts, videos.ts) and kept by the store before the job is ready; its
// captions are also served as WebVTT. An avatar's preview is a portrait drawn from its
// inputs (portrait.ts) on first download, off the event loop, from the inputs alone (so
// any API process draws the same file), and kept.
import { LRUCache } from 'lru-cache';
import { createReadStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { AvatarInput, Job, VideoInput } from '../domain/model.ts';
import { SANDBOX_FAILURE_MARKER } from '../../../contract/sandbox.ts';
import type { Artifact, ArtifactRequest, EngineOutcome, GenerationEngine } from '../domain/engine.ts';
import { CAPTIONS_FILE_NAME, FILE_NAME } from '../domain/files.ts';
import { createPortraits } from './portraits.ts';
import { defaultRendersRoot, makeRenderFolder, sweepRenderFolders } from './renderFolders.ts';
import { videoDurationSeconds, webVtt } from './timeline.ts';
import { createVideos, type Render } from './videos.ts';

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
  /** How a video is rendered into a file; by default in a process of its own (videos.ts). Tests put a failure here. */
  render?: Render;
  /**
   * Where renders keep their files while they run (renderFolders.ts): the service's is in
   * its data folder, swept at start-up; a folder of this user's under the system's
   * temporary folder by default.
   */
  rendersRoot?: string;
}

const serviceTime = (_job: Job, ms: number, signal: AbortSignal) => sleep(ms, undefined, { signal });

function triggersFailure(job: Job): boolean {
  if (!job.sandbox) return false;
  const text = job.kind === 'avatar' ? (job.input as AvatarInput).name : (job.input as VideoInput).script;
  return text.includes(SANDBOX_FAILURE_MARKER);
}

/** Whether this process has swept the default root of render folders (the service sweeps its own at start-up). */
let defaultRootSwept = false;

/** Rendered previews kept: about 15 KB each, some 12 MB in all. */
const KEPT_PREVIEWS = 800;

/** The avatar drawn for a video whose avatar cannot be read (never the case while the store keeps avatars). */
const unknownAvatar = (video: VideoInput): AvatarInput => ({ type: 'prompt', name: '', prompt: video.avatar_id });

export function createBuiltinEngine(options: BuiltinEngineOptions): GenerationEngine {
  const wait = (job: Job, ms: number, signal: AbortSignal) => (ms > 0 ? (options.wait ?? serviceTime)(job, ms, signal) : Promise.resolve());
  const portraits = createPortraits();
  const videos = createVideos({ render: options.render });
  const rendersRoot = options.rendersRoot ?? defaultRendersRoot();
  if (options.rendersRoot === undefined && !defaultRootSwept) {
    defaultRootSwept = true;
    void sweepRenderFolders(rendersRoot).catch(() => undefined);
  }
  /** Renders the video into a folder of its own while its job waits out the engine's time; the folder goes at the job's end, whatever it is. */
  async function video(job: Job, avatar: Job | null, signal: AbortSignal, rendered: () => void): Promise<EngineOutcome> {
    const input = job.input as VideoInput;
    const dir = await makeRenderFolder(rendersRoot);
    const waiting = wait(job, options.videoMs, signal);
    const discard = () => rm(dir, { recursive: true, force: true });
    const out = join(dir, FILE_NAME.avatar_video);
    const request = { avatar: (avatar?.input as AvatarInput | undefined) ?? unknownAvatar(input), video: input };
    // Both settle before the folder goes: a render stopped with its wait is not writing into it any more.
    const rendering = videos.render(job.accountId, request, out, signal);
    void rendering.then(rendered, () => undefined);
    const [waited, made] = await Promise.allSettled([waiting, rendering]);
    const failure = [made, waited].find((r) => r.status === 'rejected');
    if (failure) {
      await discard();
      throw failure.reason;
    }
    return {
      status: 'ready',
      // The length the file has, to the frame.
      result: { duration_seconds: videoDurationSeconds(input.script) },
      files: [{ name: FILE_NAME.avatar_video, contentType: 'video/mp4', read: () => createReadStream(out) }],
      discard,
    };
  }
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
    async generate(job, signal, inputs): Promise<EngineOutcome> {
      const rendered = inputs?.rendered ?? (() => undefined);
      if (job.kind === 'avatar_video' && !triggersFailure(job)) return video(job, inputs?.avatar ?? null, signal, rendered);
      // Nothing to render: the account's next video need not wait for this one's time.
      rendered();
      await wait(job, job.kind === 'avatar' ? options.avatarMs : options.videoMs, signal);
      if (triggersFailure(job)) {
        return { status: 'failed', error: { code: 'sandbox_forced_failure', message: `The request contains the sandbox failure marker ${SANDBOX_FAILURE_MARKER}.` } };
      }
      return { status: 'ready', result: {} };
    },
    async artifact({ job, name }: ArtifactRequest): Promise<Artifact | null> {
      if (job.kind === 'avatar') return name === FILE_NAME.avatar ? { contentType: 'image/png', body: await preview(job) } : null;
      // The MP4 is the job's, kept by the store: it is never rendered on a download.
      return name === CAPTIONS_FILE_NAME ? { contentType: 'text/vtt; charset=utf-8', body: Buffer.from(webVtt((job.input as VideoInput).script)) } : null;
    },
    close: async () => {
      await Promise.all([portraits.close(), videos.close()]);
    },
  };
}
