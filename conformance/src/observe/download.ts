// Downloads a file a record links to (video_url, captions, a preview), as a player or a
// client following the link would: GET, redirects followed to a bounded depth on any
// origin (a presigned storage URL is the norm), the body read up to a bound. It is not
// the API client (http.ts): a file link is outside the contract's paths, its answers are
// bytes, and its host may be another than the service's, which never sees the API key:
// the key is presented only to the API's own origin, as browsers and curl drop
// credentials on a redirect to another host.
import { describeNetworkError } from '../http.ts';
import { reached } from '../deadline.ts';

/**
 * Redirects followed before giving up: a presigned link takes one hop, a CDN in front of
 * storage two or three; ten is well past any of them and stops a loop early (the Fetch
 * standard allows 20, curl 50, for links of any kind).
 */
export const MAX_REDIRECTS = 10;

/**
 * The most bytes read of one file. The run's video says a 15-word script (some 6 s): this
 * project's server makes it in about 0.3 MB, and at a generous 8 Mbit/s it would be 6 MB;
 * 64 MiB reads any honest encoding of it, and bounds what a service can make the runner hold.
 */
export const MAX_FILE_BYTES = 64 * 1024 * 1024;

/** How many first bytes a failure shows, in hex. */
export const EXCERPT_BYTES = 32;

export interface Hop {
  url: string;
  status: number;
  location?: string;
}

export interface Download {
  /** The URL finally answered, after the redirects in `hops`. */
  url: string;
  /** The answers before it that redirected, in order. */
  hops: Hop[];
  status: number;
  /** Lower-case names. */
  headers: Record<string, string>;
  body: Uint8Array;
  /** The file was longer than `maxBytes`: `body` holds its first bytes only. */
  cut: boolean;
}

export type Fetched = { ok: true; download: Download } | { ok: false; problem: string; hops: Hop[] };

export interface DownloadOptions {
  /** Request headers (Range, If-Range). */
  headers?: Record<string, string>;
  /** The API's origin, which alone is shown the credential. */
  apiOrigin: string;
  credential?: [name: string, value: string] | undefined;
  timeoutMs: number;
  signal?: AbortSignal;
  maxBytes?: number;
  fetch?: typeof globalThis.fetch;
}

const REDIRECTS: ReadonlySet<number> = new Set([301, 302, 303, 307, 308]);

/** GETs `url`, following redirects; a network failure or a loop is a problem, not an exception. */
export async function download(url: string, options: DownloadOptions): Promise<Fetched> {
  const fetchImpl = options.fetch ?? globalThis.fetch;
  const maxBytes = options.maxBytes ?? MAX_FILE_BYTES;
  const hops: Hop[] = [];
  let current = url;
  for (;;) {
    let parsed: URL;
    try {
      parsed = new URL(current);
    } catch {
      return { ok: false, problem: `${JSON.stringify(current.slice(0, 200))} is not a URL`, hops };
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return { ok: false, problem: `${current.slice(0, 200)} is not an http(s) URL`, hops };
    const headers: Record<string, string> = { ...options.headers };
    if (options.credential && parsed.origin === options.apiOrigin) headers[options.credential[0]] = options.credential[1];
    const timeout = AbortSignal.timeout(options.timeoutMs);
    const signal = options.signal ? AbortSignal.any([timeout, options.signal]) : timeout;
    let response: Response;
    try {
      response = await fetchImpl(current, { method: 'GET', headers, redirect: 'manual', signal });
    } catch (error) {
      if (options.signal?.aborted) throw reached(options.signal, `downloading ${current}`);
      return { ok: false, problem: `GET ${current}: ${describeNetworkError(error)}`, hops };
    }
    const location = response.headers.get('location');
    if (REDIRECTS.has(response.status) && location !== null) {
      await response.body?.cancel().catch(() => undefined);
      hops.push({ url: current, status: response.status, location });
      if (hops.length > MAX_REDIRECTS) return { ok: false, problem: `more than ${MAX_REDIRECTS} redirects`, hops };
      current = new URL(location, current).href;
      continue;
    }
    const answerHeaders: Record<string, string> = {};
    response.headers.forEach((value, name) => {
      answerHeaders[name.toLowerCase()] = value;
    });
    try {
      const { body, cut } = await readBounded(response, maxBytes);
      return { ok: true, download: { url: current, hops, status: response.status, headers: answerHeaders, body, cut } };
    } catch (error) {
      if (options.signal?.aborted) throw reached(options.signal, `reading ${current}`);
      return { ok: false, problem: `GET ${current}: answered ${response.status}, then the body failed: ${describeNetworkError(error)}`, hops };
    }
  }
}

/** The body's first `maxBytes` bytes, in chunks as they come: never a buffer of a size the answer claims. */
async function readBounded(response: Response, maxBytes: number): Promise<{ body: Uint8Array; cut: boolean }> {
  if (!response.body) return { body: new Uint8Array(0), cut: false };
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let length = 0;
  let cut = false;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    const room = maxBytes - length;
    if (value.byteLength > room) {
      chunks.push(value.subarray(0, room));
      length += room;
      cut = true;
      await reader.cancel().catch(() => undefined);
      break;
    }
    chunks.push(value);
    length += value.byteLength;
  }
  const body = new Uint8Array(length);
  let offset = 0;
  for (const chunk of chunks) {
    body.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return { body, cut };
}

/** The first bytes in hex, with their printable characters beside them: what a failure shows of a file. */
export function firstBytes(body: Uint8Array, count = EXCERPT_BYTES): string {
  const head = body.subarray(0, count);
  const hex = [...head].map((byte) => byte.toString(16).padStart(2, '0')).join(' ');
  const text = [...head].map((byte) => (byte >= 0x20 && byte < 0x7f ? String.fromCharCode(byte) : '.')).join('');
  return `${hex}  |${text}|${body.byteLength > count ? ` (first ${count} of ${body.byteLength} bytes)` : ` (${body.byteLength} bytes)`}`;
}

/** The answer's status and headers as lines, then its first bytes: the evidence of a failure. */
export function describeDownload(download: Download): string {
  const lines = download.hops.map((hop) => `GET ${hop.url} -> ${hop.status} Location: ${hop.location ?? ''}`);
  lines.push(`GET ${download.url} -> ${download.status}`);
  for (const [name, value] of Object.entries(download.headers)) {
    if (/^(content-type|content-length|content-range|accept-ranges|etag|transfer-encoding|cache-control|location)$/.test(name)) lines.push(`${name}: ${value.slice(0, 200)}`);
  }
  lines.push(`first bytes: ${firstBytes(download.body)}`);
  return lines.join('\n');
}

/** The media type of an answer, lower case, without parameters. */
export function mediaTypeOf(download: Download): string {
  return (download.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
}
