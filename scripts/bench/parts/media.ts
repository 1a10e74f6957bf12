// What the built-in engine's media cost: the time and memory to make one avatar's preview
// and a 30-second video in each frame, as the server makes them: the preview on its first
// download, a video by its job (three in each frame, the median's figures kept), from
// create to ready (the engine's ENGINE_*_MS waits set to 0, so only the making is timed),
// with the CPU a job spends per second of video it makes. The server's peak RSS is sampled
// with the peaks of the render process and the encoder it starts, and reads of a record
// are timed meanwhile, which shows whether making media holds up the event loop.
import { readdirSync } from 'node:fs';
import { loadConfig } from '../../../server/src/config.ts';
import { videoDurationSeconds } from '../../../server/src/engine/timeline.ts';
import { processCpu, watchCpu } from '../cpu.ts';
import { bearer, getJson, postJson, sleep, startBenchServer, waitFor, type Context } from '../harness.ts';
import type { MediaFile, MediaSection } from '../model.ts';
import { readMemory, type Proc } from '../procs.ts';
import { medianBy, summarize } from '../stats.ts';
import { STORE_LABEL } from '../stores.ts';

const READY_TIMEOUT_MS = 180_000;
const DOWNLOAD_TIMEOUT_MS = 180_000;
/**
 * Jobs made in each frame, one after another: a frame's figures are those of the job with
 * the median CPU, as the other parts take the median of their rounds, so that one job
 * slowed by something else on the machine does not stand for the engine's cost.
 */
const JOBS_PER_FRAME = 3;
/** How often memory is sampled and a record read while a file is made. */
const SAMPLE_MS = 20;
/** 75 words: 30 seconds at the engine's 2.5 words a second. */
export const THIRTY_SECOND_SCRIPT =
  'Three weeks with this serum and my skin has never looked better. Here is my morning routine. ' +
  'First I wash with warm water and a gentle cleanser. Then two drops of serum, pressed in and never rubbed. ' +
  'I wait a minute for it to sink in. Next comes a light moisturiser and, last of all, sunscreen, even on cloudy days. ' +
  'That is the whole routine: five minutes every single morning, and honestly it really shows.';

/** The processes under `pid`, children and theirs (a render process and its encoder), with their command names. */
function descendantsOf(pid: number): { pid: number; command: string }[] {
  const parents = new Map<number, { ppid: number; command: string }>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/u.test(entry)) continue;
    const found = processCpu(entry); // null when gone meanwhile
    if (found) parents.set(Number(entry), found);
  }
  const under = (p: number): boolean => {
    for (let up = parents.get(p); up; up = parents.get(up.ppid)) if (up.ppid === pid) return true;
    return false;
  };
  return [...parents].filter(([p]) => under(p)).map(([p, { command }]) => ({ pid: p, command }));
}

/** CPU seconds a process used, with those of its children that have ended (the encoder). */
function cpuWithChildren(pid: number): number {
  const cpu = processCpu(pid);
  return cpu ? cpu.seconds + cpu.endedChildrenSeconds : Number.NaN;
}

/**
 * Times `make` (a preview's first download, or a video's job from create to ready), and
 * then a download of the file `make` answers the URL of (made by then), sampling
 * meanwhile the server's RSS, the peaks of the processes it starts (a video's render
 * process and its encoder), and the latency of reads of `readPath`.
 */
async function measureMaking(proc: Proc, make: () => Promise<string>, readPath: string, key: string): Promise<Omit<MediaFile, 'what' | 'aspectRatio' | 'durationSeconds'>> {
  const before = proc.memory();
  let serverPeak = before?.rssBytes ?? 0;
  let renderPeak = 0;
  let encoderPeak = 0;
  // CPU seconds of each process the server starts, as last sampled: a process's own
  // figure is gone from /proc once it ends, so the last sample stands for its whole.
  const childCpu = new Map<number, { command: string; seconds: number }>();
  const reads: number[] = [];
  let done = false;
  const sampler = (async () => {
    while (!done) {
      serverPeak = Math.max(serverPeak, proc.memory()?.rssBytes ?? 0);
      for (const child of descendantsOf(proc.pid)) {
        const peak = readMemory(child.pid)?.hwmBytes ?? 0;
        if (child.command === 'ffmpeg') encoderPeak = Math.max(encoderPeak, peak);
        else renderPeak = Math.max(renderPeak, peak);
        const cpu = processCpu(child.pid);
        if (cpu) childCpu.set(child.pid, { command: child.command, seconds: cpu.seconds });
      }
      const t0 = performance.now();
      await getJson(`${proc.url}${readPath}`, bearer(key));
      reads.push(performance.now() - t0);
      await sleep(SAMPLE_MS);
    }
  })();
  const cpuBefore = cpuWithChildren(proc.pid);
  const machine = watchCpu(proc.pid);
  const t0 = performance.now();
  let url: string;
  try {
    url = await make();
  } finally {
    done = true;
    await sampler;
  }
  const makeMs = performance.now() - t0;
  const cpuSeconds = cpuWithChildren(proc.pid) - cpuBefore;
  const cores = machine.stop();
  // The server's children are not its own process's figure in watchCpu: what they used is taken out of "other" here.
  const otherCores = Math.max(0, cores.machine - cores.loadGenerator - cores.databases - cpuSeconds / cores.seconds);
  const t1 = performance.now();
  const again = await fetch(url, { signal: AbortSignal.timeout(DOWNLOAD_TIMEOUT_MS) });
  const bytes = (await again.arrayBuffer()).byteLength;
  const keptMs = performance.now() - t1;
  if (again.status !== 200) throw new Error(`GET ${url}: ${again.status}`);
  const readLatency = summarize(reads);
  const sampled = [...childCpu.values()];
  const childSeconds = (encoder: boolean) => {
    const found = sampled.filter((c) => (c.command === 'ffmpeg') === encoder);
    return found.length > 0 ? found.reduce((sum, c) => sum + c.seconds, 0) : null;
  };
  return {
    bytes,
    makeMs,
    cpuSeconds,
    renderCpuSeconds: childSeconds(false),
    encoderCpuSeconds: childSeconds(true),
    otherCores,
    keptMs,
    serverRssBeforeBytes: before?.rssBytes ?? Number.NaN,
    serverPeakRssBytes: serverPeak,
    renderPeakRssBytes: renderPeak || null,
    encoderPeakRssBytes: encoderPeak || null,
    readsMeanwhile: reads.length,
    readP50Ms: readLatency.p50,
    readMaxMs: readLatency.max,
  };
}

async function readyRecord(proc: Proc, key: string, path: string, payload: unknown): Promise<{ id: string; body: any }> {
  const created = await postJson(`${proc.url}${path}`, key, payload);
  if (created.status !== 202) throw new Error(`POST ${path}: ${created.status} ${JSON.stringify(created.body)}`);
  const id = created.body.id as string;
  const body = await waitFor(`${id} ready`, async () => {
    const r = await getJson(`${proc.url}${path}/${id}`, bearer(key));
    if (r.body?.status === 'failed') throw new Error(`${id} failed: ${r.text}`);
    return r.body?.status === 'ready' ? r.body : undefined;
  }, READY_TIMEOUT_MS);
  return { id, body };
}

export async function mediaPhase(ctx: Context): Promise<MediaSection> {
  const kind = ctx.options.stores.includes('embedded') ? 'embedded' : ctx.options.stores[0]!;
  const store = await ctx.store(kind);
  const defaults = loadConfig({}).engine;
  try {
    const owner = await store.createOwner({ name: 'Bench media' });
    const proc = await startBenchServer(`server-${kind}-media`, store);
    const local = (url: string) => `${proc.url}${new URL(url).pathname}`;
    const files: MediaFile[] = [];
    try {
      ctx.log(`media: ${STORE_LABEL[kind]}: one avatar's preview made on its first download, then one 30-second video in each frame made by its job`);
      const avatar = await readyRecord(proc, owner.apiKey, '/v1/avatars', { type: 'props', name: 'Bench presenter', ethnicity: 'Hispanic', sex: 'male', age: 34 });
      const readPath = `/v1/avatars/${avatar.id}`;
      const preview = local(avatar.body.preview_image_url);
      const firstDownload = async () => {
        const first = await fetch(preview, { signal: AbortSignal.timeout(DOWNLOAD_TIMEOUT_MS) });
        await first.arrayBuffer();
        if (first.status !== 200) throw new Error(`GET ${preview}: ${first.status}`);
        return preview;
      };
      files.push({ what: 'avatar preview (PNG, 512x512)', aspectRatio: null, durationSeconds: null, ...(await measureMaking(proc, firstDownload, readPath, owner.apiKey)) });
      for (const aspectRatio of ['9:16', '16:9', '1:1'] as const) {
        let durationSeconds: number | null = null;
        const job = async () => {
          const video = await readyRecord(proc, owner.apiKey, '/v1/avatar-videos', { avatar_id: avatar.id, script: THIRTY_SECOND_SCRIPT, aspect_ratio: aspectRatio });
          durationSeconds = video.body.duration_seconds as number;
          return local(video.body.video_url);
        };
        const jobs: Awaited<ReturnType<typeof measureMaking>>[] = [];
        for (let i = 0; i < JOBS_PER_FRAME; i++) jobs.push(await measureMaking(proc, job, readPath, owner.apiKey));
        files.push({ what: 'video (MP4)', aspectRatio, durationSeconds, ...medianBy(jobs, (j) => j.cpuSeconds), cpuSecondsOfJobs: jobs.map((j) => j.cpuSeconds) });
      }
      const idleAfter = proc.memory();
      return {
        store: kind,
        scriptSeconds: videoDurationSeconds(THIRTY_SECOND_SCRIPT),
        engineAvatarMsDefault: defaults.avatarMs,
        engineVideoMsDefault: defaults.videoMs,
        serverRssAfterBytes: idleAfter?.rssBytes ?? Number.NaN,
        files,
      };
    } finally {
      await proc.stop();
    }
  } finally {
    await ctx.drop(store);
  }
}
