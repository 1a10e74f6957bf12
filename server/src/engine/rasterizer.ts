// SVG to PNG off the event loop: one worker thread, started on the first render and let go
// after a while idle, so a server that renders nothing never holds one.
import { Piscina } from 'piscina';
import type { RasterizeTask } from './rasterizeWorker.ts';

export interface Rasterizer {
  png(svg: string, width: number): Promise<Buffer>;
  close(): Promise<void>;
}

/** How long the worker stays up without work. */
const IDLE_MS = 30_000;

export function createRasterizer(): Rasterizer {
  let pool: Piscina<RasterizeTask, Uint8Array> | undefined;
  return {
    async png(svg, width) {
      pool ??= new Piscina({ filename: new URL('./rasterizeWorker.ts', import.meta.url).href, minThreads: 0, maxThreads: 1, idleTimeout: IDLE_MS });
      const bytes = await pool.run({ svg, width });
      return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    },
    async close() {
      await pool?.destroy();
      pool = undefined;
    },
  };
}
