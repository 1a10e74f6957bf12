// The runner's own stalls: spans in which its event loop ran late, because the machine
// was loaded or a long synchronous step held it. Every time the runner measures between
// two events it saw includes its stalls, and a stall is not the implementation's time:
// the copy of a webhook sent moments after its attempt is received a stall later, and a
// retry that came on time is seen a stall late. Where a check judges such an interval,
// or waits a stated time for something to arrive, it leaves the stalls out, so that a
// slow runner never fails a correct implementation. A leaf: it imports nothing of the runner.

/** How often the meter looks at the clock. */
const TICK_MS = 25;
/** Lateness of a tick up to this is timer jitter, not a stall. */
const JITTER_MS = 25;
/** Stalls older than this are forgotten: no wait or judged interval of a run is longer. */
const KEEP_MS = 2 * 60 * 60 * 1000;

export interface Stalls {
  /** Milliseconds of [from, to] (the runner's time) in which the runner was stalled. */
  within(from: number, to: number): number;
}

/** No stall is ever seen: for a runner whose time is injected (and a test's exact timings). */
export const NO_STALLS: Stalls = { within: () => 0 };

export class StallMeter implements Stalls {
  readonly #now: () => number;
  readonly #spans: { from: number; to: number }[] = [];
  #last: number;
  #timer: NodeJS.Timeout | undefined;

  constructor(now: () => number = Date.now) {
    this.#now = now;
    this.#last = now();
    this.#timer = setInterval(() => this.#tick(), TICK_MS);
    // It only watches: it never keeps the process up.
    this.#timer.unref();
  }

  within(from: number, to: number): number {
    // A stall still going on (the tick that would end it has not run yet) counts too:
    // a timer due during the stall may run before the meter's tick does.
    const open = this.#open(this.#now());
    let total = 0;
    for (const span of open ? [...this.#spans, open] : this.#spans) {
      total += Math.max(0, Math.min(to, span.to) - Math.max(from, span.from));
    }
    return total;
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  #open(now: number): { from: number; to: number } | undefined {
    return now - this.#last > TICK_MS + JITTER_MS ? { from: this.#last + TICK_MS, to: now } : undefined;
  }

  #tick(): void {
    const now = this.#now();
    const open = this.#open(now);
    if (open) this.#spans.push(open);
    this.#last = now;
    while (this.#spans.length > 0 && this.#spans[0]!.to < now - KEEP_MS) this.#spans.shift();
  }
}
