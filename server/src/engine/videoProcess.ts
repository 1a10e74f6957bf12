// A video's render, as a process of its own (videos.ts starts one per video): the
// request as JSON on stdin, with the file to write the MP4 to; why it failed on stderr
// and exit code 1. Drawing, speech and waiting on the encoder happen here, never on the
// server's event loop, and what they take (the speech engine's WebAssembly, the drawings)
// is given back to the system when the process ends. SIGTERM stops the encoder and ends
// the render.
import { flushCompileCache } from 'node:module';
import { setPriority } from 'node:os';
import { renderVideoFile, type VideoRequest } from './video.ts';

/**
 * The render's niceness, which its encoder inherits: rendering is batch work that may take
 * minutes, while the server's processes answer requests and sign webhooks against the
 * clock. On a busy machine they come first; on an idle one a render still has every core.
 */
const RENDER_NICENESS = 10;
try {
  setPriority(RENDER_NICENESS);
} catch {
  // A system that refuses (none known) renders at the server's own priority.
}

const stop = new AbortController();
process.once('SIGTERM', () => stop.abort());

async function main(): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  const { out, ...request } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as VideoRequest & { out: string };
  await renderVideoFile(request, out, stop.signal);
}

// What Node compiled for this process, kept for the next render when the server gave it a
// compile cache (videos.ts); written before the exit, which would otherwise skip it.
const exit = (code: number) => {
  flushCompileCache();
  process.exit(code);
};

main().then(
  () => exit(0),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    exit(1);
  },
);
