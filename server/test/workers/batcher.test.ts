import { describe, expect, it } from 'vitest';
import { createBatcher } from '../../src/workers/batcher.ts';

/** A write that holds until the test lets it go, recording what each write carried. */
function heldWrites() {
  const writes: number[][] = [];
  const releases: ((error?: Error) => void)[] = [];
  const write = (items: number[]) =>
    new Promise<void>((resolve, reject) => {
      writes.push(items);
      releases.push((error) => (error ? reject(error) : resolve()));
    });
  const started = async (count: number) => {
    while (writes.length < count) await new Promise((r) => setImmediate(r));
  };
  return { writes, releases, write, started };
}

describe('the batcher', () => {
  it('writes what is added in one turn together, and what comes during a write in the next', async () => {
    const held = heldWrites();
    const batcher = createBatcher(held.write);

    const first = [batcher.add(1), batcher.add(2), batcher.add(3)];
    await held.started(1);
    const second = [batcher.add(4), batcher.add(5)];
    held.releases[0]!();
    await Promise.all(first);
    await held.started(2);
    held.releases[1]!();
    await Promise.all(second);

    expect(held.writes).toEqual([[1, 2, 3], [4, 5]]);
  });

  it('fails the items of a failed write only, and goes on writing', async () => {
    const held = heldWrites();
    const batcher = createBatcher(held.write);

    const failed = expect(batcher.add(1)).rejects.toThrow('store unavailable');
    await held.started(1);
    const next = batcher.add(2);
    held.releases[0]!(new Error('store unavailable'));
    await held.started(2);
    held.releases[1]!();

    await failed;
    await expect(next).resolves.toBeUndefined();
  });

  it('drains: settles once everything added is written', async () => {
    const written: number[] = [];
    const batcher = createBatcher(async (items: number[]) => {
      await new Promise((r) => setTimeout(r, 5));
      written.push(...items);
    });

    void batcher.add(1);
    void batcher.add(2);
    await batcher.drain();

    expect(written).toEqual([1, 2]);
  });
});
