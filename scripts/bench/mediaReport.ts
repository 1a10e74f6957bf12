// The media part of bench/latest.md (parts/media.ts): what making the built-in engine's
// files costs, beside the waits the engine takes by default. Kept apart from report.ts,
// which renders the other parts; report.ts lists this section among its own.
import type { BenchReport, MediaFile } from './model.ts';
import { formatNumber, MB } from './stats.ts';
import { STORE_LABEL } from './stores.ts';

const ms = (v: number) => (Number.isNaN(v) ? 'n/a' : `${formatNumber(v)} ms`);
const mb = (bytes: number | null) => (bytes === null || Number.isNaN(bytes) ? 'n/a' : `${formatNumber(bytes / MB)} MB`);

function table(head: string[], rows: string[][]): string {
  const line = (cells: string[]) => `| ${cells.map((c) => c.replace(/\|/g, '\\|')).join(' | ')} |`;
  return [line(head), line(head.map(() => '---')), ...rows.map(line)].join('\n');
}

const label = (f: MediaFile) => (f.aspectRatio ? `${f.durationSeconds} s video, ${f.aspectRatio}` : f.what);

/** CPU seconds spent per second of video made: null for the preview, which has no duration. */
export const cpuPerVideoSecond = (f: MediaFile): number | null => (f.durationSeconds ? f.cpuSeconds / f.durationSeconds : null);

/** 8. Making media: one preview on its first download and one 30-second video per frame, made by its job. */
export function mediaSection(report: BenchReport): string[] {
  const media = report.media;
  if (!media) return [];
  const out: string[] = [];
  out.push("## 8. Media: making an avatar's preview and a 30-second video");
  const jobsPerFrame = media.files.find((f) => f.cpuSecondsOfJobs)?.cpuSecondsOfJobs?.length ?? 1;
  const jobsNote = jobsPerFrame > 1 ? `, ${jobsPerFrame} jobs in each frame, one after another, the one with the median CPU giving the frame's figures` : '';
  out.push('');
  out.push(
    `One server on the ${STORE_LABEL[media.store]} store with \`ENGINE_AVATAR_MS=0\` and \`ENGINE_VIDEO_MS=0\`, so that only the making is timed: the preview is made by its first download (on the engine's drawing thread), a video by its job, from create to ready (in a render process of its own and the FFmpeg process it starts, then kept by the store)${jobsNote}; a download then serves what is kept. Meanwhile a record is read again and again, one read at a time, to show whether the event loop is held up. The media cost of jobs is the CPU a video's job spends, every process of the server counted, per second of video it makes; of it, the render process (drawing, speech) and its encoder (FFmpeg) as last sampled while the job ran.`,
  );
  out.push('');
  const cpuOfJobs = (f: MediaFile) => (f.cpuSecondsOfJobs && f.cpuSecondsOfJobs.length > 1 ? `; its frame's ${f.cpuSecondsOfJobs.length} jobs: ${f.cpuSecondsOfJobs.map((c) => `${formatNumber(c)} s`).join(', ')}` : '');
  out.push(
    table(
      ['file', 'size', 'made in (preview: first download; video: its job, create to ready)', 'CPU, all processes', 'media cost of jobs: CPU s per s of video', 'download once made', 'server RSS before → peak', 'peak RSS: render process, encoder', 'reads meanwhile: p50 / max'],
      media.files.map((f) => [
        label(f),
        mb(f.bytes),
        ms(f.makeMs),
        // A report from before the split was measured holds neither.
        (f.renderCpuSeconds ?? null) === null && (f.encoderCpuSeconds ?? null) === null
          ? `${formatNumber(f.cpuSeconds)} s`
          : `${formatNumber(f.cpuSeconds)} s (render process ${formatNumber(f.renderCpuSeconds ?? 0)} s, encoder ${formatNumber(f.encoderCpuSeconds ?? 0)} s${f.otherCores === undefined ? '' : `; the machine's other processes ${formatNumber(f.otherCores, 2)} cores`}${cpuOfJobs(f)})`,
        cpuPerVideoSecond(f) === null ? 'n/a' : `${formatNumber(cpuPerVideoSecond(f)!)} s`,
        ms(f.keptMs),
        `${mb(f.serverRssBeforeBytes)} → ${mb(f.serverPeakRssBytes)}`,
        f.renderPeakRssBytes === null && f.encoderPeakRssBytes === null ? 'none' : `${mb(f.renderPeakRssBytes)}, ${mb(f.encoderPeakRssBytes)}`,
        `${f.readsMeanwhile}: ${ms(f.readP50Ms)} / ${ms(f.readMaxMs)}`,
      ]),
    ),
  );
  out.push('');
  const preview = media.files.find((f) => !f.aspectRatio);
  const videos = media.files.filter((f) => f.aspectRatio);
  const slowest = videos.reduce<MediaFile | undefined>((a, f) => (!a || f.makeMs > a.makeMs ? f : a), undefined);
  const lines: string[] = [];
  if (preview) {
    lines.push(
      `A preview takes ${ms(preview.makeMs)} to make against the engine's default wait of ${formatNumber(media.engineAvatarMsDefault)} ms for an avatar (\`ENGINE_AVATAR_MS\`): ${preview.makeMs < media.engineAvatarMsDefault ? 'the wait, not the drawing, is what a client sees' : 'the drawing takes longer than the wait'}.`,
    );
  }
  if (slowest) {
    lines.push(
      `A ${formatNumber(media.scriptSeconds)}-second video's job takes up to ${ms(slowest.makeMs)} to make it (${slowest.aspectRatio}) against the default wait of ${formatNumber(media.engineVideoMsDefault)} ms for a video (\`ENGINE_VIDEO_MS\`), which runs beside the render: ${slowest.makeMs < media.engineVideoMsDefault ? `the wait stays above the making, by ${ms(media.engineVideoMsDefault - slowest.makeMs)}` : `the making passes the wait by ${ms(slowest.makeMs - media.engineVideoMsDefault)}, so the job takes that much longer than the wait`}; the job is \`ready\` only once its file is kept, so its first download is served at once, and a shorter script takes proportionally less.`,
    );
    const costs = videos.map(cpuPerVideoSecond).filter((c): c is number => c !== null);
    if (costs.length > 0) lines.push(`Media cost of jobs: ${formatNumber(Math.min(...costs))} to ${formatNumber(Math.max(...costs))} CPU seconds per second of video made.`);
  }
  lines.push(`Server RSS after all of it: ${mb(media.serverRssAfterBytes)}.`);
  out.push(lines.join(' '));
  out.push('');
  return out;
}
