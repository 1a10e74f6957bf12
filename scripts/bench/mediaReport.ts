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

/** 8. Making media: one preview and one 30-second video per frame, on first download. */
export function mediaSection(report: BenchReport): string[] {
  const media = report.media;
  if (!media) return [];
  const out: string[] = [];
  out.push("## 8. Media: making an avatar's preview and a 30-second video");
  out.push('');
  out.push(
    `One server on the ${STORE_LABEL[media.store]} store with \`ENGINE_AVATAR_MS=0\` and \`ENGINE_VIDEO_MS=0\`, so that only the making is timed: each file's first download makes it (the preview on the engine's drawing thread, a video in a render process of its own and the FFmpeg process it starts), the second is served from what the server keeps. Meanwhile a record is read again and again, one read at a time, to show whether the event loop is held up.`,
  );
  out.push('');
  out.push(
    table(
      ['file', 'size', 'made in (first download)', 'CPU, all processes', 'kept (second download)', 'server RSS before → peak', 'peak RSS: render process, encoder', 'reads meanwhile: p50 / max'],
      media.files.map((f) => [
        label(f),
        mb(f.bytes),
        ms(f.makeMs),
        `${formatNumber(f.cpuSeconds)} s`,
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
      `A ${formatNumber(media.scriptSeconds)}-second video takes up to ${ms(slowest.makeMs)} (${slowest.aspectRatio}) against the default wait of ${formatNumber(media.engineVideoMsDefault)} ms for a video (\`ENGINE_VIDEO_MS\`): ${slowest.makeMs < media.engineVideoMsDefault ? `the wait stays above the making, by ${ms(media.engineVideoMsDefault - slowest.makeMs)}` : `the making passes the wait by ${ms(slowest.makeMs - media.engineVideoMsDefault)}, so a client that downloads at once waits for it`}; the video is made on its first download, after the job is \`ready\`, and a shorter script takes proportionally less.`,
    );
  }
  lines.push(`Server RSS after all of it: ${mb(media.serverRssAfterBytes)}.`);
  out.push(lines.join(' '));
  out.push('');
  return out;
}
