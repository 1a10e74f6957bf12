// Reads a WebVTT file (W3C WebVTT, https://www.w3.org/TR/webvtt1/) as far as the runner
// judges captions: the "WEBVTT" signature line, and each cue's start and end. The text
// comes from a service under test: it is read line by line once, with no backtracking
// pattern over the whole file, so its cost is its length.

export interface VttCue {
  startSeconds: number;
  endSeconds: number;
  text: string;
}

export type VttReading = { ok: true; cues: VttCue[] } | { ok: false; problem: string };

/** hh:mm:ss.ttt or mm:ss.ttt (hours of two or more digits, minutes and seconds below 60). */
const TIMESTAMP = /^(?:(\d{2,}):)?([0-5]\d):([0-5]\d)\.(\d{3})$/;

/** A cue's timing line: two timestamps around "-->", then optional cue settings. */
const TIMING = /^(\S+)[ \t]+-->[ \t]+(\S+)(?:[ \t].*)?$/;

/** Reads a WebVTT file's cues in order, or says why it is not WebVTT. */
export function readWebVtt(text: string): VttReading {
  const lines = text.replace(/^\uFEFF/, '').split(/\r\n|\r|\n/);
  const first = lines[0] ?? '';
  if (!/^WEBVTT(?:[ \t].*)?$/.test(first)) return { ok: false, problem: `the first line is ${JSON.stringify(first.slice(0, 40))}, not "WEBVTT" (optionally followed by a space or tab and text)` };
  const cues: VttCue[] = [];
  let index = 1;
  // The header's own lines run to the first blank line.
  while (index < lines.length && lines[index] !== '') index++;
  while (index < lines.length) {
    while (index < lines.length && lines[index] === '') index++;
    if (index >= lines.length) break;
    const blockStart = index;
    const block: string[] = [];
    while (index < lines.length && lines[index] !== '') block.push(lines[index++]!);
    const head = block[0]!;
    if (/^(NOTE|STYLE|REGION)(?:[ \t]|$)/.test(head) && !head.includes('-->')) continue;
    // A cue has an optional identifier line, then its timing line.
    const timingAt = head.includes('-->') ? 0 : 1;
    const timing = block[timingAt];
    if (timing === undefined || !timing.includes('-->')) return { ok: false, problem: `line ${blockStart + 1}: a block that is neither a cue (no "-->" timing line) nor a NOTE, STYLE or REGION: ${JSON.stringify(head.slice(0, 60))}` };
    const line = blockStart + timingAt + 1;
    const parts = TIMING.exec(timing);
    if (!parts) return { ok: false, problem: `line ${line}: ${JSON.stringify(timing.slice(0, 60))} is not "start --> end"` };
    const start = seconds(parts[1]!);
    const end = seconds(parts[2]!);
    if (start === undefined || end === undefined) return { ok: false, problem: `line ${line}: ${JSON.stringify(timing.slice(0, 60))} holds a timestamp that is not [hh:]mm:ss.ttt` };
    if (end <= start) return { ok: false, problem: `line ${line}: the cue ends (${parts[2]}) no later than it starts (${parts[1]})` };
    cues.push({ startSeconds: start, endSeconds: end, text: block.slice(timingAt + 1).join('\n') });
  }
  return { ok: true, cues };
}

function seconds(stamp: string): number | undefined {
  const parts = TIMESTAMP.exec(stamp);
  if (!parts) return undefined;
  const [, hours = '0', minutes, secs, millis] = parts;
  return Number(hours) * 3600 + Number(minutes) * 60 + Number(secs) + Number(millis) / 1000;
}
