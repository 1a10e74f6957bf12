// The implementation's sandbox clock, where it has one: each key's account can move its
// own time forward. The runner moves over rate-limit windows instead of waiting them out,
// and the checks that can only be seen by waiting a day, a month or half an hour of
// retries use it. Whether a key has a clock is found out once, safely, by moving it one
// second forward: a clock that answers a read may still refuse to move.
import type { Exchange, Http, KeyName } from './http.ts';
import type { Shape } from './implementation/shape.ts';

/** How long a sender may take, in the runner's time, to act on a move of the clock. */
export const REACTION_MS = 1500;

export class SandboxClock {
  readonly #http: Http;
  readonly #shape: Shape;
  readonly #available = new Map<KeyName, boolean>();
  /** The move in flight per key: moves of one key are made one after the other. */
  readonly #moving = new Map<KeyName, Promise<boolean>>();
  /** Every move of this run: when it was sent and answered (runner's time) and how far. */
  readonly #moves: { key: KeyName; sentAt: number; at: number; seconds: number }[] = [];
  /** Why the clock is not used, for the report; undefined when it is. */
  reason: string | undefined;

  readonly #now: () => number;

  constructor(http: Http, shape: Shape, now: () => number) {
    this.#http = http;
    this.#shape = shape;
    this.#now = now;
  }

  /**
   * Whether the key's account time may have moved between two instants of the runner's
   * time: a move was in flight or answered in between. Values that describe a window
   * (RateLimit-Reset, Remaining) cannot be compared across such a move. The runner's
   * clock counts whole milliseconds, so a move within the same one counts as between.
   */
  movedBetween(key: KeyName, from: number, to: number): boolean {
    return this.#moves.some((m) => m.key === key && m.sentAt <= to && m.at >= from);
  }

  /**
   * The key's account time at an instant of the runner's time, as a range: a move in
   * flight at that instant (sent, not yet answered), or one within the same millisecond,
   * may or may not have taken effect.
   */
  accountTime(key: KeyName, at: number): { earliest: number; latest: number } {
    let answered = 0;
    let sent = 0;
    for (const m of this.#moves) {
      if (m.key !== key) continue;
      if (m.at < at) answered += m.seconds * 1000;
      if (m.sentAt <= at) sent += m.seconds * 1000;
    }
    return { earliest: at + answered, latest: at + sent };
  }

  /**
   * The wait between two events the implementation caused (e.g. two webhook attempts) in
   * the key's account time, in seconds, as a range. Without moves nearby it is exact. A
   * sender may take REACTION_MS to act on what happened: to see the first event's
   * outcome (a move in that time may come before the wait starts), and to see a move (a
   * move shortly before the second event may be what made it due).
   */
  gap(key: KeyName, from: number, to: number): { shortest: number; longest: number } {
    const near = (span: [number, number]) => this.#moves.some((m) => m.key === key && m.sentAt <= span[1] && m.at >= span[0]);
    const start = this.accountTime(key, from);
    const end = this.accountTime(key, to);
    const latestStart = near([from, from + REACTION_MS]) ? this.accountTime(key, from + REACTION_MS).latest : start.latest;
    // A sender that polls may act on a move long after it: when the time moved between the
    // two events, the second may have been due as early as just before the last move.
    const lastMove = this.#moves.filter((m) => m.key === key && m.sentAt <= to && m.at >= from).at(-1);
    const earliestEnd = Math.min(
      near([to - REACTION_MS, to]) ? this.accountTime(key, to - REACTION_MS).earliest : end.earliest,
      lastMove ? this.accountTime(key, lastMove.sentAt).earliest : end.earliest,
    );
    return { shortest: (earliestEnd - latestStart) / 1000, longest: (end.latest - start.earliest) / 1000 };
  }

  /** Finds out which keys have a clock. `enabled: false` keeps the run on real time. */
  async detect(keys: KeyName[], enabled: boolean): Promise<void> {
    if (!enabled) {
      this.reason = 'the sandbox clock is turned off (--no-clock)';
      return;
    }
    if (!this.#shape.clockAdvance(1)) {
      this.reason = 'the implementation profile names no sandbox clock';
      return;
    }
    for (const key of keys) this.#available.set(key, (await this.#advance(key, 1)) !== undefined);
    if (!this.has('main')) this.reason = 'the implementation has no sandbox clock for the main key (a move of one second was refused)';
  }

  has(key: KeyName): boolean {
    return this.#available.get(key) === true;
  }

  /**
   * Moves the key's account time forward by at least `seconds` (whole seconds, at least
   * one). False when the key has no clock or the move was refused; a refused move takes
   * the key off the clock for the rest of the run (its windows are then waited out).
   */
  async advance(key: KeyName, seconds: number): Promise<boolean> {
    if (!this.has(key)) return false;
    // One move at a time per key: wait for the one in flight, then make this one.
    await this.#moving.get(key)?.catch(() => undefined);
    if (!this.has(key)) return false;
    const move = this.#advance(key, seconds).then((exchange) => {
      if (exchange === undefined) {
        this.#available.set(key, false);
        this.reason ??= `a move of the ${key} key's sandbox clock was refused during the run`;
      }
      return exchange !== undefined;
    });
    this.#moving.set(key, move);
    try {
      return await move;
    } finally {
      this.#moving.delete(key);
    }
  }

  /**
   * For the pacer: moves the key's time over a window. Requests waiting on the same
   * window share a move already in flight instead of each making one.
   */
  async moveOver(key: KeyName, seconds: number): Promise<boolean> {
    return this.#moving.get(key) ?? this.advance(key, seconds);
  }

  async #advance(key: KeyName, seconds: number): Promise<Exchange | undefined> {
    const whole = Math.max(1, Math.ceil(seconds));
    const request = this.#shape.clockAdvance(whole)!;
    const sentAt = this.#now();
    const exchange = await this.#http.send({ key, method: request.method, path: request.path, json: request.json, on429: 'return', pace: false, note: `sandbox clock +${whole} s` });
    if (exchange.status < 200 || exchange.status >= 300) return undefined;
    this.#moves.push({ key, sentAt, at: this.#now(), seconds: whole });
    this.#http.pacer.advanced(key, whole * 1000);
    return exchange;
  }
}
