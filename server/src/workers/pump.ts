/**
 * The loop both workers run: one pass at a time, started by a timer or by wake(). A
 * wake-up that arrives during a pass schedules one more pass, so no wake-up is lost
 * and passes never overlap.
 */
export interface Pump {
  start(): void;
  wake(): void;
  stop(): void;
  readonly running: boolean;
}

export function createPump(pass: () => Promise<void>, pollMs: number, onError: (error: unknown) => void): Pump {
  let running = false;
  let busy = false;
  let again = false;
  let timer: NodeJS.Timeout | undefined;

  async function loop(): Promise<void> {
    if (busy) {
      again = true;
      return;
    }
    busy = true;
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
    stop() {
      running = false;
      clearInterval(timer);
    },
  };
  return pump;
}
