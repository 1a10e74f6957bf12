// The conformance proxy's memory over a long run: the proxy (`avatar-conformance proxy`,
// as users run it, a child process of its own) in front of a server on the embedded
// store, and about 1 GB of traffic through it on the loopback: creates whose bodies are
// far past the service's limit, with their length and chunked, which the proxy must
// pass to the service's 413 without holding them, and small exchanges between them
// (creates that route a webhook_url and answer 402, reads of /v1/me), each of which
// the proxy records for judging. RSS before, after and at its peak (VmHWM).
import { spawn } from 'node:child_process';
import { connect } from 'node:net';
import { join } from 'node:path';
import { startBenchServer, type Context } from '../harness.ts';
import type { ProxySection } from '../model.ts';
import { ROOT, readMemory, sampleMemory } from '../procs.ts';

const CLI = join(ROOT, 'conformance', 'src', 'cli.ts');
/** One large body: a round 100 MiB, as a client uploading a file where JSON belongs would send. */
const LARGE_BODY_BYTES = 100 * 1024 * 1024;
/** Small exchanges between two large bodies. */
const SMALL_BETWEEN = 200;
const READY_TIMEOUT_MS = 30_000;
/** A large body through the proxy on the loopback takes about a second; a stall is a failure of the part, not a wait. */
const BODY_TIMEOUT_MS = 120_000;

/** Sends a create with `bytes` of body from one buffer of 1 MiB written again and again; resolves with the answer's status. */
function sendLarge(base: string, key: string, bytes: number, chunked: boolean): Promise<number> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    socket.setTimeout(BODY_TIMEOUT_MS, () => socket.destroy(new Error(`no end within ${BODY_TIMEOUT_MS / 1000} s`)));
    const chunk = Buffer.alloc(1 << 20, 0x20);
    const framed = chunked ? Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n')]) : chunk;
    socket.write(`POST /v1/avatars HTTP/1.1\r\nHost: ${hostname}:${port}\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\n${chunked ? 'Transfer-Encoding: chunked' : `Content-Length: ${bytes}`}\r\n\r\n`);
    let sent = 0;
    const pump = () => {
      while (sent < bytes) {
        sent += chunk.length;
        if (!socket.write(framed)) return void socket.once('drain', pump);
      }
      if (chunked) socket.end('0\r\n\r\n');
      else socket.end();
    };
    let head = '';
    socket.on('data', (c: Buffer) => {
      if (head.length < 64) head += c.toString('latin1');
    });
    socket.on('error', reject);
    socket.on('end', () => resolve(Number(head.split(' ')[1])));
    pump();
  });
}

export async function proxyPhase(ctx: Context): Promise<ProxySection> {
  const largeBodies = ctx.options.quick ? 2 : 10;
  const store = await ctx.store('embedded');
  try {
    // No credits: every small create answers 402 and starts no job, so the server's work stays small beside the proxy's.
    const owner = await store.createOwner({ name: 'Bench proxy', monthlyCredits: 0 });
    const server = await startBenchServer('server-embedded-proxy', store);
    const child = spawn(process.execPath, [CLI, 'proxy', '--upstream', server.url, '--listen', '0'], { cwd: ROOT, env: { ...process.env, NO_COLOR: '1', CONFORMANCE_SIGNING_SECRET: '' }, stdio: ['ignore', 'pipe', 'ignore'] });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let out = '';
        const timer = setTimeout(() => reject(new Error(`the proxy printed no URL within ${READY_TIMEOUT_MS / 1000} s`)), READY_TIMEOUT_MS);
        child.stdout!.on('data', (c: Buffer) => {
          out += c.toString();
          if (!out.includes('\n')) return;
          clearTimeout(timer);
          const found = /http:\/\/127\.0\.0\.1:\d+/.exec(out.split('\n')[0]!);
          if (found) resolve(found[0]);
          else reject(new Error(`the proxy's first line has no URL: ${out.split('\n')[0]}`));
        });
        child.once('exit', (code) => reject(new Error(`the proxy exited with ${code} before serving`)));
      });
      const idle = readMemory(child.pid!);
      const sampler = sampleMemory(child.pid!, 50);
      const started = performance.now();
      const headers = { Authorization: `Bearer ${owner.apiKey}`, 'Content-Type': 'application/json' };
      const small = JSON.stringify({ type: 'prompt', name: 'Bench proxy', prompt: 'A presenter by a window', webhook_url: 'http://127.0.0.1:9/hook' });
      let bytes = 0;
      let exchanges = 0;
      const unexpected: string[] = [];
      for (let i = 0; i < largeBodies; i++) {
        const chunked = i % 2 === 1;
        const status = await sendLarge(url, owner.apiKey, LARGE_BODY_BYTES, chunked);
        bytes += LARGE_BODY_BYTES;
        exchanges++;
        if (status !== 413) unexpected.push(`a ${LARGE_BODY_BYTES} byte body${chunked ? ', chunked' : ''} got ${status}`);
        for (let j = 0; j < SMALL_BETWEEN; j++) {
          const create = j % 2 === 0;
          const answer = await fetch(`${url}/v1/${create ? 'avatars' : 'me'}`, create ? { method: 'POST', headers, body: small } : { headers });
          const text = await answer.text();
          bytes += (create ? small.length : 0) + text.length;
          exchanges++;
          if (answer.status !== (create ? 402 : 200)) unexpected.push(`${create ? 'a create' : 'GET /v1/me'} got ${answer.status}`);
        }
        ctx.log(`proxy: ${i + 1}/${largeBodies} large bodies, ${Math.round(bytes / 1e6).toLocaleString('en-US')} MB so far, RSS ${Math.round((readMemory(child.pid!)?.rssBytes ?? 0) / 1e6)} MB`);
      }
      const seconds = (performance.now() - started) / 1000;
      const peak = sampler.stop();
      const after = readMemory(child.pid!);
      return {
        trafficBytes: bytes,
        largeBodies,
        largeBodyBytes: LARGE_BODY_BYTES,
        exchanges,
        seconds,
        rssIdleBytes: idle?.rssBytes ?? Number.NaN,
        rssAfterBytes: after?.rssBytes ?? Number.NaN,
        peakRssBytes: peak?.peakRssBytes ?? Number.NaN,
        hwmBytes: after?.hwmBytes ?? Number.NaN,
        unexpected: unexpected.slice(0, 5),
      };
    } finally {
      child.kill('SIGKILL');
      await server.stop();
    }
  } finally {
    await ctx.drop(store);
  }
}
