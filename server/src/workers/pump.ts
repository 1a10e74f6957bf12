/**
 * The loop both workers run: one pass at a time, started by a timer or by wake(). A
 * wake-up that arrives during a pass schedules one more pass, so no wake-up is lost
 * and passes never overlap.
 */
export interface Pump {
  start(): void;
  wake(): void;
  /** No pass starts after this; settles when the pass under way, if any, has ended. */
  stop(): Promise<void>;
  readonly running: boolean;
}

export function createPump(pass: () => Promise<void>, pollMs: number, onError: (error: unknown) => void): Pump {
  let running = false;
  let busy = false;
  let again = false;
  let timer: NodeJS.Timeout | undefined;
  let current: Promise<void> = Promise.resolve();

  function loop(): Promise<void> {
    if (busy) {
      again = true;
      return current;
    }
    busy = true;
    current = passes();
    return current;
  }

  async function passes(): Promise<void> {
    try {
      do {
        again = false;
        await pass();
      } while (again && running);
    } catch (error) {
      onError(error);
    } finally {
      busy = false;
    }
  }

  const pump: Pump = {
    get running() {
      return running;
    },
    start() {
      running = true;
      timer = setInterval(pump.wake, pollMs);
      timer.unref();
      pump.wake();
    },
    wake() {
      if (running) void loop();
    },
    async stop() {
      running = false;
      clearInterval(timer);
      await current;
    },
  };
  return pump;
}
