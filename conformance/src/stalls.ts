// The runner's own stalls: spans in which its event loop ran late, because the machine
// was loaded or a long synchronous step held it. Every time the runner measures between
// two events it saw includes its stalls, and a stall is not the implementation's time:
// the copy of a webhook sent moments after its attempt is received a stall later, and a
// retry that came on time is seen a stall late. Where a check judges such an interval,
// or waits a stated time for something to arrive, it leaves the stalls out, so that a
// slow runner never fails a correct implementation. A leaf: it imports nothing of the runner.
import { performance } from 'node:perf_hooks';

/** How often the meter looks at the clock. */
const TICK_MS = 25;
/** Lateness of a tick up to this is timer jitter, not a stall. */
const JITTER_MS = 25;
/** What is older than this is forgotten: no wait or judged interval of a run is longer. */
const KEEP_MS = 10 * 60 * 1000;

export interface Stalls {
  /** Milliseconds of [from, to] (the runner's time) in which the runner was stalled. */
  within(from: number, to: number): number;
  /**
   * Milliseconds of [from, to] in which the runner was stalled or busy with other work
   * (its event loop running, not waiting for I/O): the most its reading of an arrival can
   * have been delayed by itself. Larger than `within`: it is for upper bounds only, e.g.
   * how late a retry may look, never for telling a copy from a retry.
   */
  busyWithin(from: number, to: number): number;
}

/** No stall is ever seen: for a runner whose time is injected (and a test's exact timings). */
export const NO_STALLS: Stalls = { within: () => 0, busyWithin: () => 0 };

interface Span {
  from: number;
  to: number;
  /** Of it, milliseconds busy or stalled. */
  busy: number;
}

export class StallMeter implements Stalls {
  readonly #now: () => number;
  readonly #stalls: Span[] = [];
  readonly #busy: Span[] = [];
  #last: number;
  #utilization = performance.eventLoopUtilization();
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
    return sum(open ? [...this.#stalls, open] : this.#stalls, from, to);
  }

  busyWithin(from: number, to: number): number {
    const open = this.#open(this.#now());
    return sum(open ? [...this.#busy, open] : this.#busy, from, to);
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  #open(now: number): Span | undefined {
    return now - this.#last > TICK_MS + JITTER_MS ? { from: this.#last + TICK_MS, to: now, busy: now - this.#last - TICK_MS } : undefined;
  }

  #tick(): void {
    const now = this.#now();
    const open = this.#open(now);
    if (open) this.#stalls.push(open);
    // The loop's active time since the last tick, in milliseconds.
    const utilization = performance.eventLoopUtilization();
    const active = utilization.active - this.#utilization.active;
    this.#utilization = utilization;
    const busy = Math.min(now - this.#last, Math.max(open?.busy ?? 0, active));
    if (busy >= 1) this.#busy.push({ from: this.#last, to: now, busy });
    this.#last = now;
    for (const spans of [this.#stalls, this.#busy]) {
      while (spans.length > 0 && spans[0]!.to < now - KEEP_MS) spans.shift();
    }
  }
}

/** The busy milliseconds of the spans within [from, to], a span's spread evenly over it. */
function sum(spans: readonly Span[], from: number, to: number): number {
  let total = 0;
  for (const span of spans) {
    const overlap = Math.min(to, span.to) - Math.max(from, span.from);
    if (overlap <= 0) continue;
    total += span.to > span.from ? (span.busy * overlap) / (span.to - span.from) : 0;
  }
  return total;
}
