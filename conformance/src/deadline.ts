// Deadlines: the run's bound and each check's limit, as AbortSignals that every wait of
// the runner honours (sleeps, the pacer's windows, 429 waits, requests, the receiver's
// waits). A wait that a deadline ends throws LimitReached, which says whose limit it was
// and what was being waited for, so the report can give the reason instead of the run
// hanging. A leaf: it imports nothing of the runner.

/** The scope of the run's own deadline, its bound; a check's is its ID. */
export const RUN_SCOPE = 'the run';

/** A deadline was reached: the check (or the run) stops where it was, with this reason. */
export class LimitReached extends Error {
  override name = 'LimitReached';
  /** Whose deadline it is: a check's ID, or RUN_SCOPE. */
  readonly scope: string;
  readonly limitSeconds: number;
  /** What was being waited for when it came. */
  readonly waitingFor: string | undefined;
  constructor(scope: string, limitSeconds: number, waitingFor?: string) {
    super(`${scope} reached its ${scope === RUN_SCOPE ? 'bound' : 'limit'} of ${limitSeconds} s${waitingFor ? `, ${waitingFor}` : ''}`);
    this.scope = scope;
    this.limitSeconds = limitSeconds;
    this.waitingFor = waitingFor;
  }

  /** The same limit, told while waiting for something in particular. */
  during(waitingFor: string): LimitReached {
    return this.waitingFor ? this : new LimitReached(this.scope, this.limitSeconds, waitingFor);
  }
}

/** The LimitReached that ended a wait on `signal`, naming what the wait was for. */
export function reached(signal: AbortSignal, waitingFor: string): LimitReached {
  const reason: unknown = signal.reason;
  return reason instanceof LimitReached ? reason.during(waitingFor) : new LimitReached(RUN_SCOPE, 0, waitingFor);
}

export interface Deadline {
  readonly signal: AbortSignal;
  /** Milliseconds it allows from its start. */
  readonly limitMs: number;
  /**
   * Ends it: stops its timer (which would keep the process up) and aborts its signal, so
   * that nothing still waiting under it outlives the work it bounded.
   */
  dispose(): void;
  /**
   * Moves its end to `limitMs` from its start, when that is later: a run bound anew once
   * it knows it must wait windows out. One already reached stays reached.
   */
  extend(limitMs: number, statedSeconds?: number): void;
}

/**
 * A deadline `limitMs` from now, that also ends when `parent` does (a check's limit
 * within the run's bound). Its timer is a real timer, not an injected clock: the bound
 * is a promise about wall time.
 */
export function deadline(scope: string, limitMs: number, parent?: AbortSignal, statedSeconds?: number): Deadline {
  const controller = new AbortController();
  const startedAt = Date.now();
  // The run's deadline comes before the bound it keeps (teardown comes after it): its
  // messages name the bound that was stated.
  let seconds = statedSeconds ?? Math.ceil(limitMs / 1000);
  let timer = setTimeout(() => controller.abort(new LimitReached(scope, seconds)), Math.max(0, limitMs));
  const onParent = () => controller.abort(parent!.reason);
  if (parent?.aborted) onParent();
  else parent?.addEventListener('abort', onParent, { once: true });
  return {
    signal: controller.signal,
    get limitMs() {
      return limitMs;
    },
    extend(later: number, laterSeconds?: number) {
      if (controller.signal.aborted || later <= limitMs) return;
      clearTimeout(timer);
      limitMs = later;
      seconds = laterSeconds ?? Math.ceil(later / 1000);
      timer = setTimeout(() => controller.abort(new LimitReached(scope, seconds)), Math.max(0, startedAt + later - Date.now()));
    },
    dispose() {
      clearTimeout(timer);
      parent?.removeEventListener('abort', onParent);
      if (!controller.signal.aborted) controller.abort(new LimitReached(scope, seconds, 'after it was over'));
    },
  };
}

/** `work`, or LimitReached as soon as `signal` aborts, whichever comes first. */
export function within<T>(work: Promise<T>, signal: AbortSignal | undefined, waitingFor: string): Promise<T> {
  if (!signal) return work;
  if (signal.aborted) {
    work.catch(() => undefined);
    return Promise.reject(reached(signal, waitingFor));
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(reached(signal, waitingFor));
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

/**
 * A sleep that a deadline ends early with LimitReached. The injected sleep is given the
 * signal too, so the default one clears its timer; one that ignores it is still raced.
 */
export function sleepWithin(sleep: (ms: number, signal?: AbortSignal) => Promise<void>, ms: number, signal: AbortSignal | undefined, waitingFor: string): Promise<void> {
  if (signal?.aborted) return Promise.reject(reached(signal, waitingFor));
  return within(sleep(ms, signal), signal, waitingFor);
}
