// The in-memory store (storage/memory/, what the MSW package runs the domain on) held
// to the other stores' behaviour: the job store's suite, run again with openStore
// answering a memory store. Claims, leases, the queue's order on the service's time,
// completion charged once, reservations, the outbox and its fair claims are the same.
import { afterAll, expect, vi } from 'vitest';

const opened = vi.hoisted(() => ({ count: 0 }));
vi.mock('../../src/runtime.ts', async () => {
  const { createMemoryStore } = await import('../../src/storage/memory/index.ts');
  return {
    openStore: async () => {
      opened.count++;
      return createMemoryStore();
    },
  };
});

await import('./jobStore.test.ts');

// The suite ran on memory stores, not on the store the project's tests run on.
afterAll(() => expect(opened.count).toBeGreaterThanOrEqual(19));
