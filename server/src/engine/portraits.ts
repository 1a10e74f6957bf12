// Avatars' previews, drawn off the event loop: one worker thread (portraitWorker.ts),
// started on the first preview asked for and let go after a while idle, so a server that
// draws nothing never holds one.
import { Piscina } from 'piscina';
import type { AvatarInput } from '../domain/model.ts';

export interface Portraits {
  /** The PNG preview of an avatar with these inputs. */
  png(input: AvatarInput): Promise<Buffer>;
  close(): Promise<void>;
}

/** How long the worker stays up without work. */
const IDLE_MS = 30_000;

export function createPortraits(): Portraits {
  let pool: Piscina<AvatarInput, Uint8Array> | undefined;
  return {
    async png(input) {
      pool ??= new Piscina({ filename: new URL('./portraitWorker.ts', import.meta.url).href, minThreads: 0, maxThreads: 1, idleTimeout: IDLE_MS });
      const bytes = await pool.run(input);
      return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    },
    async close() {
      await pool?.destroy();
      pool = undefined;
    },
  };
}
