import { describe, expect, it } from 'vitest';
import { createPump } from '../../src/workers/pump.ts';

describe('the pump', () => {
  it('stops only once the pass under way has ended, and starts none after', async () => {
    let release!: () => void;
    let passes = 0;
    const pump = createPump(
      async () => {
        passes++;
        await new Promise<void>((resolve) => (release = resolve));
      },
      60_000,
      () => undefined,
    );
    pump.start(); // the first pass starts at once and holds
    pump.wake(); // asks for one more, after it

    let stopped = false;
    const stopping = pump.stop().then(() => (stopped = true));
    await new Promise((r) => setImmediate(r));
    expect(stopped).toBe(false);
    release();
    await stopping;

    expect(stopped).toBe(true);
    expect(passes).toBe(1);
  });
});
