// How the runner downloads a file a record links to (observe/download.ts): redirects
// followed across origins to a bound, the API key shown to the API's own origin only, and
// a body read no further than the bound, however long the service makes it.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeDownload, download, MAX_REDIRECTS } from '../src/observe/download.ts';

interface Origin {
  url: string;
  server: Server;
  /** The credential header each request came with, by path. */
  seen: { path: string; key: string | undefined }[];
}

async function origin(handle: (req: IncomingMessage, res: ServerResponse) => void): Promise<Origin> {
  const seen: Origin['seen'] = [];
  const server = createServer((req, res) => {
    seen.push({ path: req.url ?? '', key: req.headers['x-api-key'] as string | undefined });
    handle(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server, seen };
}

let api: Origin;
let storage: Origin;

beforeAll(async () => {
  storage = await origin((req, res) => {
    if (req.url === '/endless') {
      // A body without end, as a hostile service may send: chunk after chunk until the reader stops.
      const chunk = Buffer.alloc(64 * 1024, 1);
      const more = () => {
        while (res.write(chunk));
      };
      res.on('drain', more);
      res.on('close', () => res.off('drain', more));
      more();
      return;
    }
    res.writeHead(200, { 'Content-Type': 'video/mp4' }).end(Buffer.from('the file'));
  });
  api = await origin((req, res) => {
    const loop = /^\/loop\/(\d+)$/.exec(req.url ?? '');
    if (loop) return void res.writeHead(302, { Location: `/loop/${Number(loop[1]) + 1}` }).end();
    if (req.url === '/to-storage') return void res.writeHead(302, { Location: `${storage.url}/object?sig=abc` }).end();
    if (req.url === '/relative') return void res.writeHead(307, { Location: 'to-storage' }).end();
    res.writeHead(404).end();
  });
});

afterAll(async () => {
  for (const { server } of [api, storage]) {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});

const options = () => ({ apiOrigin: api.url, credential: ['x-api-key', 'ik_main_secret'] as [string, string], timeoutMs: 5000 });

describe('download', () => {
  it('when a link redirects, relatively and then to another origin, then it follows, and shows the key to the API alone', async () => {
    const fetched = await download(`${api.url}/relative`, options());

    expect(fetched.ok && [fetched.download.status, Buffer.from(fetched.download.body).toString(), fetched.download.url]).toEqual([200, 'the file', `${storage.url}/object?sig=abc`]);
    expect(fetched.ok && fetched.download.hops.map((hop) => hop.status)).toEqual([307, 302]);
    expect(api.seen.slice(-2)).toEqual([
      { path: '/relative', key: 'ik_main_secret' },
      { path: '/to-storage', key: 'ik_main_secret' },
    ]);
    expect(storage.seen.at(-1)).toEqual({ path: '/object?sig=abc', key: undefined });
    expect(fetched.ok && describeDownload(fetched.download)).toContain('first bytes: 74 68 65 20 66 69 6c 65  |the file| (8 bytes)');
  });

  it(`when a link redirects without end, then it gives up after ${MAX_REDIRECTS} redirects`, async () => {
    const fetched = await download(`${api.url}/loop/0`, options());

    expect(fetched).toMatchObject({ ok: false, problem: `more than ${MAX_REDIRECTS} redirects` });
    expect(!fetched.ok && fetched.hops).toHaveLength(MAX_REDIRECTS + 1);
  });

  it('when a body has no end, then it reads the bound and stops, saying the file was cut', async () => {
    const fetched = await download(`${storage.url}/endless`, { ...options(), maxBytes: 1_000_000 });

    expect(fetched.ok && [fetched.download.body.byteLength, fetched.download.cut]).toEqual([1_000_000, true]);
  });

  it('when a link is no http(s) URL or nothing answers, then the problem says so', async () => {
    expect(await download('file:///etc/passwd', options())).toMatchObject({ ok: false, problem: 'file:///etc/passwd is not an http(s) URL' });
    const closed = await origin(() => undefined);
    closed.server.close();
    expect(await download(`${closed.url}/x`, options())).toMatchObject({ ok: false, problem: expect.stringMatching(/^GET http:\/\/127\.0\.0\.1:\d+\/x: ECONNREFUSED/) });
  });
});
