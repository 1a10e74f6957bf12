// Plans requests within the rate limits. One gate per key and bucket
// learns the window from the RateLimit-* headers of every answer and holds a request
// back until the window has room, instead of assuming the contract's limits; a 429 closes
// the gate for Retry-After seconds. So a run spends as little time as the limits allow
// and stays deterministic: the runner only meets a 429 where a check asks for one. A wait
// for a window ends early, with LimitReached, when the deadline it runs under does.
import { sleepWithin, within } from './deadline.ts';

export type Bucket = 'read' | 'generation';

/** The longest window, in seconds, that a limit of the bucket can describe. */
export type WindowFor = (bucket: Bucket, limit: number | undefined) => number;

/** Extra wait after a window's announced reset, for clock granularity (seconds are whole). */
const RESET_MARGIN_MS = 150;

export class Gate {
  limit: number | undefined;
  remaining: number | undefined;
  resetAt: number | undefined;
  inFlight = 0;
  readonly #waiters: (() => void)[] = [];
  readonly #now: () => number;
  readonly #sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  readonly #longest: (limit: number | undefined) => number;
  readonly #skip: (ms: number) => Promise<boolean>;

  /**
   * `skip` moves the key's time over a wait instead of sleeping through it (a sandbox
   * clock); it answers false when it cannot, and the gate sleeps.
   */
  constructor(
    now: () => number,
    sleep: (ms: number, signal?: AbortSignal) => Promise<void>,
    longest: (limit: number | undefined) => number = () => Infinity,
    skip: (ms: number) => Promise<boolean> = async () => false,
  ) {
    this.#now = now;
    this.#sleep = sleep;
    this.#longest = longest;
    this.#skip = skip;
  }

  /** The key's time moved forward by `ms`: its window ends that much sooner. */
  shift(ms: number): void {
    if (this.resetAt !== undefined) this.resetAt -= ms;
  }

  /** Requests that could go now without waiting. */
  capacity(): number {
    this.#roll();
    if (this.remaining === undefined) return this.inFlight === 0 ? 1 : 0;
    return this.remaining - this.inFlight;
  }

  /** Milliseconds until the gate opens again when it has no capacity now. */
  waitMs(): number {
    if (this.capacity() > 0) return 0;
    if (this.resetAt === undefined) return 0;
    return Math.max(0, this.resetAt - this.#now()) + RESET_MARGIN_MS;
  }

  async acquire(onWait?: (ms: number) => void, signal?: AbortSignal, label = 'a rate-limit window'): Promise<void> {
    for (;;) {
      if (this.capacity() > 0) {
        this.inFlight++;
        return;
      }
      if (this.resetAt !== undefined) {
        const ms = this.waitMs();
        if (await within(this.#skip(ms), signal, `waiting for ${label}`)) continue;
        onWait?.(ms);
        await sleepWithin(this.#sleep, ms, signal, `waiting ${(ms / 1000).toFixed(1)} s for ${label}`);
      } else if (this.inFlight > 0) {
        // A request is under way: its answer will say how much room is left.
        await within(new Promise<void>((resolve) => this.#waiters.push(resolve)), signal, `waiting for ${label}`);
      } else {
        // Told "none left" without a reset time: wait a second, then probe again.
        onWait?.(1000);
        await sleepWithin(this.#sleep, 1000, signal, `waiting for ${label}`);
        this.remaining = undefined;
      }
    }
  }

  release(): void {
    this.inFlight = Math.max(0, this.inFlight - 1);
    this.#waiters.splice(0).forEach((wake) => wake());
  }

  /**
   * Learns the window from a GET /v1/me body (ND-ME), which shows it even when no
   * answer of this bucket carried headers yet (refusals such as 422 carry none).
   */
  seed(limit: number, remaining: number, resetSeconds: number): void {
    this.limit = limit;
    this.remaining = remaining;
    this.resetAt = this.#now() + this.#plausible(resetSeconds) * 1000;
  }

  /** Learns the window from an answer's headers (lower-case names). */
  observe(status: number, headers: Record<string, string>, retryAfterSeconds: number | undefined): void {
    const now = this.#now();
    const limit = integer(headers['ratelimit-limit'] ?? headers['x-ratelimit-limit']);
    const remaining = integer(headers['ratelimit-remaining'] ?? headers['x-ratelimit-remaining']);
    const reset = integer(headers['ratelimit-reset'] ?? headers['x-ratelimit-reset']);
    // Every authenticated request counts, but only successes and 429s say so: count
    // the others here.
    if (remaining === undefined && status !== 429 && this.remaining !== undefined) {
      this.#roll();
      if (this.remaining !== undefined) this.remaining = Math.max(0, this.remaining - 1);
    }
    if (limit !== undefined) this.limit = limit;
    if (remaining !== undefined) {
      // Answers to concurrent requests may arrive out of order: keep the lower count
      // within one window.
      const sameWindow = this.resetAt !== undefined && reset !== undefined && Math.abs(now + reset * 1000 - this.resetAt) < 1500;
      this.remaining = sameWindow && this.remaining !== undefined ? Math.min(this.remaining, remaining) : remaining;
    }
    if (reset !== undefined) this.resetAt = now + this.#plausible(reset) * 1000;
    if (status === 429) {
      this.remaining = 0;
      const seconds = retryAfterSeconds ?? reset ?? 1;
      this.resetAt = now + this.#plausible(seconds) * 1000;
    }
  }

  /**
   * A wait announced by the service, bounded by the window it describes: a Reset or
   * Retry-After beyond it is a fault the checks report, never a reason to stall the run.
   */
  #plausible(seconds: number): number {
    return Math.min(seconds, this.#longest(this.limit));
  }

  #roll(): void {
    if (this.resetAt !== undefined && this.#now() >= this.resetAt + RESET_MARGIN_MS) {
      this.remaining = this.limit;
      this.resetAt = undefined;
    }
  }
}

export class Pacer {
  readonly #gates = new Map<string, Gate>();
  readonly #now: () => number;
  readonly #sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  readonly #windowFor: WindowFor;
  /** Moves a key's time over a wait, where the implementation has a sandbox clock. */
  skip: (key: string, ms: number) => Promise<boolean> = async () => false;
  constructor(now: () => number, sleep: (ms: number, signal?: AbortSignal) => Promise<void>, windowFor: WindowFor = () => Infinity) {
    this.#now = now;
    this.#sleep = sleep;
    this.#windowFor = windowFor;
  }
  gate(key: string, bucket: Bucket): Gate {
    const name = `${key}:${bucket}`;
    let gate = this.#gates.get(name);
    if (!gate) {
      gate = new Gate(this.#now, this.#sleep, (limit) => this.#windowFor(bucket, limit), (ms) => this.skip(key, ms));
      this.#gates.set(name, gate);
    }
    return gate;
  }

  /** The key's account time moved forward by `ms`: every window of the key ends that much sooner. */
  advanced(key: string, ms: number): void {
    for (const [name, gate] of this.#gates) if (name.startsWith(`${key}:`)) gate.shift(ms);
  }
}

function integer(value: string | undefined): number | undefined {
  if (value === undefined || !/^\s*\d+\s*$/.test(value)) return undefined;
  return Number(value);
}
