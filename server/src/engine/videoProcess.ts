// A video's render, as a process of its own (videos.ts starts one per video): the
// request as JSON on stdin, with the file to write the MP4 to; why it failed on stderr
// and exit code 1. Drawing, speech and waiting on the encoder happen here, never on the
// server's event loop, and what they take (the speech engine's WebAssembly, the drawings)
// is given back to the system when the process ends. SIGTERM stops the encoder and ends
// the render.
//
// Its arguments: the render's folder (where the MP4 goes and its drawings are kept; named
// on the command line, so a start-up sweep can tell this process and its encoder from any
// other, renderFolders.ts) and the server's process ID. The server starts it as the leader
// of a process group of its own, which its encoder joins: when the server is gone,
// however it ended (a SIGKILL runs no handler of the server's), this process kills the
// group, itself and the encoder with it.
import { flushCompileCache } from 'node:module';
import { setPriority } from 'node:os';
import { dirname } from 'node:path';
import { Worker } from 'node:worker_threads';
import { renderVideoFile, type VideoRequest } from './video.ts';

/**
 * How often the server is looked for, in milliseconds: a render left running after its
 * server is killed ends within this (and the time a thread takes to start).
 */
const SERVER_WATCH_MS = 100;

// On a thread of its own: the render's main thread is busy for seconds at a time (eSpeak
// speaks the whole script in one call), and would see its server gone only then. A
// process whose parent has ended is given another (init, or a subreaper), so the parent's
// ID changing is the server's end; the ID it should have is given on the command line, so
// a server killed before this process started is seen too. Linux's PR_SET_PDEATHSIG, which
// would do this in the kernel, is out of Node's reach, and the pipes of stdin would tell
// only the main thread.
const server = Number(process.argv[3]);
if (Number.isInteger(server) && server > 0) {
  const watcher = new Worker(
    `const server = ${server};
    setInterval(() => {
      if (process.ppid === server) return;
      try { process.kill(-process.pid, 'SIGKILL'); } catch {}
      process.kill(process.pid, 'SIGKILL');
    }, ${SERVER_WATCH_MS});`,
    { eval: true },
  );
  watcher.unref();
}

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
  await renderVideoFile(request, out, stop.signal, process.argv[2] ?? dirname(out));
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
