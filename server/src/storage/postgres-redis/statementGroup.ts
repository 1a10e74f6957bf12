// Writes (and reads) that arrive together, sent to PostgreSQL as one statement: one round trip, and for writes one commit.
import type { Row } from '../rows.ts';

/**
 * Gathers the items asked for in one turn of the event loop, or while `inFlight` groups
 * are under way, and sends each gathered group (at most `max` items) to `send` as one
 * statement. `send` answers one outcome per item, in order; if it throws, every item of
 * the group fails with its error. Since a group is one statement, it commits or fails as
 * a whole, and each caller hears only after the commit.
 */
export interface StatementGroup<I, O> {
  ask(item: I): Promise<O>;
  /** Settles once everything asked so far has been answered. */
  drain(): Promise<void>;
}

interface Waiting<I, O> {
  item: I;
  resolve(outcome: O): void;
  reject(error: unknown): void;
}

export function createStatementGroup<I, O>(send: (items: I[]) => Promise<O[]>, limits: { inFlight: number; max: number }): StatementGroup<I, O> {
  const waiting: Waiting<I, O>[] = [];
  const idle: (() => void)[] = [];
  let inFlight = 0;
  let scheduled = false;

  function schedule(): void {
    if (scheduled || waiting.length === 0 || inFlight >= limits.inFlight) return;
    scheduled = true;
    // A turn of the event loop first: what is asked alongside (requests read together, jobs finished together) joins.
    setImmediate(() => {
      scheduled = false;
      while (waiting.length > 0 && inFlight < limits.inFlight) void run(waiting.splice(0, limits.max));
    });
  }

  async function run(group: Waiting<I, O>[]): Promise<void> {
    inFlight++;
    try {
      let outcomes: O[];
      try {
        outcomes = await send(group.map((w) => w.item));
        if (outcomes.length !== group.length) throw new Error(`a grouped statement answered ${outcomes.length} outcomes for ${group.length} items`);
      } catch (error) {
        for (const w of group) w.reject(error);
        return;
      }
      group.forEach((w, i) => w.resolve(outcomes[i]!));
    } finally {
      inFlight--;
      schedule();
      if (inFlight === 0 && waiting.length === 0) for (const settle of idle.splice(0)) settle();
    }
  }

  return {
    ask(item) {
      return new Promise<O>((resolve, reject) => {
        waiting.push({ item, resolve, reject });
        schedule();
      });
    },
    drain() {
      if (inFlight === 0 && waiting.length === 0) return Promise.resolve();
      return new Promise<void>((resolve) => idle.push(resolve));
    },
  };
}

/** The outcomes of a grouped statement's rows, each naming its item by `n` (1-based, as WITH ORDINALITY counts), in the items' order. */
export function byOrdinal(rows: Row[], count: number): Row[] {
  const ordered = new Array<Row | undefined>(count);
  for (const row of rows) ordered[Number(row.n) - 1] = row;
  if (ordered.some((row) => row === undefined) || rows.length !== count) throw new Error(`a grouped statement answered ${rows.length} rows for ${count} items`);
  return ordered as Row[];
}
