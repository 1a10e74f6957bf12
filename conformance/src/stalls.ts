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
/**
 * Stalls in a check's time up to this are the runner's own short pauses (a collection, a
 * compile), which an idle machine has too; past it, or when it left out more than this
 * of what it judged, the check's result says it was judged under load.
 */
const UNDER_LOAD_MS = 250;

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

/**
 * How a check's result begins the warning that it was judged under load (the runner
 * stalled), or with the runner busy enough that an upper bound it judged was widened by
 * the runner's own work; what reads reports for them (npm run conformance:under-load) finds them by these.
 */
export const LOAD_WARNINGS = { stalled: 'judged under load: ', busy: 'judged with the runner busy: ' } as const;

/**
 * One check's view of the meter: the same answers, and the most it was told to leave out of
 * one interval it judged or waited for, so that its result can say it was judged under
 * load rather than pass on a correction nobody sees. The receiver's waits read the run's
 * meter; their stalls are within the check's time, which `underLoad` reads too.
 */
export class CheckStalls implements Stalls {
  readonly #meter: Stalls;
  #leftOutStalledMs = 0;
  #leftOutBusyMs = 0;

  constructor(meter: Stalls) {
    this.#meter = meter;
  }

  within(from: number, to: number): number {
    const ms = this.#meter.within(from, to);
    this.#leftOutStalledMs = Math.max(this.#leftOutStalledMs, ms);
    return ms;
  }

  busyWithin(from: number, to: number): number {
    const ms = this.#meter.busyWithin(from, to);
    this.#leftOutBusyMs = Math.max(this.#leftOutBusyMs, ms);
    return ms;
  }

  /**
   * What the check's result says of the load it ran under, from its start to its end: how
   * long the runner was stalled meanwhile and the most it left out of one interval it
   * judged or waited for; or, on a runner not stalled, the most of its own busy time it
   * left out of an upper bound. Nothing when all are within a quiet runner's own pauses.
   */
  underLoad(from: number, to: number): string | undefined {
    const stalledMs = this.#meter.within(from, to);
    const busy = this.#leftOutBusyMs > UNDER_LOAD_MS ? `up to ${seconds(this.#leftOutBusyMs)} s of its stalls and busy time left out of an upper bound it judged` : undefined;
    if (stalledMs > UNDER_LOAD_MS || this.#leftOutStalledMs > UNDER_LOAD_MS) {
      const leftOut = [this.#leftOutStalledMs > 0 ? `up to ${seconds(this.#leftOutStalledMs)} s of its stalls left out of an interval it judged or waited for` : undefined, busy].filter(Boolean);
      return `${LOAD_WARNINGS.stalled}the runner's event loop was stalled ${seconds(stalledMs)} s of the ${seconds(to - from)} s the check ran${leftOut.map((part) => `; ${part}`).join('')}`;
    }
    return busy && `${LOAD_WARNINGS.busy}${busy}`;
  }
}

function seconds(ms: number): string {
  return (ms / 1000).toFixed(1);
}
