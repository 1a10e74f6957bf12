/**
 * Gathers writes that arrive close together into one: what is added while a write is
 * under way, or in the same turn of the event loop, goes in the next. One write at a
 * time, so a batch grows with the store's round trip, which is when it pays. Each add
 * settles when the write that carried it does.
 */
export interface Batcher<T> {
  add(item: T): Promise<void>;
  /** Settles once everything added so far is written (or has failed). */
  drain(): Promise<void>;
}

interface Waiting<T> {
  item: T;
  resolve(): void;
  reject(error: unknown): void;
}

export function createBatcher<T>(write: (items: T[]) => Promise<void>): Batcher<T> {
  let waiting: Waiting<T>[] = [];
  let writing: Promise<void> | null = null;

  async function writeAll(): Promise<void> {
    // A turn of the event loop first: the other attempts that end now join this write.
    await new Promise<void>((resolve) => setImmediate(resolve));
    while (waiting.length > 0) {
      const batch = waiting;
      waiting = [];
      try {
        await write(batch.map((w) => w.item));
        for (const w of batch) w.resolve();
      } catch (error) {
        for (const w of batch) w.reject(error);
      }
    }
    writing = null;
  }

  return {
    add(item) {
      const added = new Promise<void>((resolve, reject) => waiting.push({ item, resolve, reject }));
      writing ??= writeAll();
      return added;
    },
    async drain() {
      while (writing) await writing;
    },
  };
}
