// A video's render, as a process of its own (videos.ts starts one per video): the
// request as JSON on stdin, the MP4 on stdout, why it failed on stderr and exit code 1.
// Drawing, speech and waiting on the encoder happen here, never on the server's event
// loop, and what they take (the speech engine's WebAssembly, the drawings, some 150 MB at
// its peak) is given back to the system when the process ends. SIGTERM stops the encoder
// and ends the render.
import { renderVideo, type VideoRequest } from './video.ts';

const stop = new AbortController();
process.once('SIGTERM', () => stop.abort());

async function main(): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  const request = JSON.parse(Buffer.concat(chunks).toString('utf8')) as VideoRequest;
  const mp4 = await renderVideo(request, stop.signal);
  await new Promise<void>((resolve, reject) => process.stdout.write(mp4, (error) => (error ? reject(error) : resolve())));
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
