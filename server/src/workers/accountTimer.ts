// Waits measured on an account's time, for the built-in engine's work: when the account's
// sandbox clock moves past the end of a wait, the wait ends at once. A move made in this
// process wakes the wait directly; one made by another process on a shared store is seen
// at the next look, every `pollMs`.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Clock } from '../domain/clock.ts';
import type { Store } from '../domain/ports.ts';

export interface AccountTimer {
  /** Resolves once `ms` of the account's time have passed; rejects when `signal` aborts. */
  wait(accountId: string, ms: number, signal: AbortSignal): Promise<void>;
  /** The account's clock moved: waits on its time look again now. */
  advanced(accountId: string): void;
}

export function createAccountTimer(store: Store, clock: Clock, pollMs: number): AccountTimer {
  const wakers = new Map<string, Set<() => void>>();

  /** The account's offset; the last one seen when the store cannot answer (a wait never fails for it). */
  async function offsetOf(accountId: string, last: number): Promise<number> {
    try {
      return (await store.accounts.getAccount(accountId))?.clockOffsetMs ?? last;
    } catch {
      return last;
    }
  }

  function nextWake(accountId: string, ms: number, signal: AbortSignal): Promise<void> {
    const ended = new AbortController();
    const wake = () => ended.abort();
    const set = wakers.get(accountId) ?? new Set();
    wakers.set(accountId, set.add(wake));
    return sleep(ms, undefined, { signal: AbortSignal.any([signal, ended.signal]) })
      .catch((error: unknown) => {
        if (signal.aborted) throw error;
      })
      .finally(() => {
        set.delete(wake);
        if (set.size === 0 && wakers.get(accountId) === set) wakers.delete(accountId);
      });
  }

  return {
    async wait(accountId, ms, signal) {
      let offset = await offsetOf(accountId, 0);
      const end = clock.now() + offset + ms;
      for (;;) {
        const remaining = end - (clock.now() + offset);
        if (remaining <= 0) return;
        await nextWake(accountId, Math.min(remaining, pollMs), signal);
        offset = await offsetOf(accountId, offset);
      }
    },
    advanced(accountId) {
      for (const wake of wakers.get(accountId) ?? []) wake();
    },
  };
}
