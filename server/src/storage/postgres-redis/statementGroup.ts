// Writes (and reads) that arrive together, sent to PostgreSQL as one statement: one round trip, and for writes one commit.
import type { Row } from '../rows.ts';
import { isUnavailable } from './database.ts';

/** SQLSTATE of a statement cancelled for its time (statement_timeout): sent again alone, each item would take as long. */
const QUERY_CANCELED = '57014';

/**
 * Whether PostgreSQL refused the statement itself (an item it cannot take: a key taken, a
 * value out of range, a deadlock), as opposed to not being there or running out of time.
 */
function refusedByDatabase(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/u.test(code) && code !== QUERY_CANCELED && !isUnavailable(error);
}

/** `send`'s outcomes, one per item sent, or an error of the service's (never a refusal of PostgreSQL's). */
function answered<O>(outcomes: O[], count: number): O[] {
  if (outcomes.length !== count) throw new Error(`a grouped statement answered ${outcomes.length} outcomes for ${count} items`);
  return outcomes;
}

/**
 * Gathers the items asked for in one turn of the event loop, or while `inFlight` groups
 * are under way, and sends each gathered group (at most `max` items) to `send` as one
 * statement. `send` answers one outcome per item, in order. Since a group is one
 * statement, it commits or fails as a whole, and each caller hears only after the commit.
 * A group PostgreSQL refused wrote nothing, and is sent again one item at a time, so that
 * an item it cannot take fails alone rather than with every item asked beside it; a group
 * that failed otherwise (PostgreSQL unavailable, or out of time) fails every item with its
 * error at once.
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
        outcomes = answered(await send(group.map((w) => w.item)), group.length);
      } catch (error) {
        if (group.length > 1 && refusedByDatabase(error)) await oneByOne(group);
        else for (const w of group) w.reject(error);
        return;
      }
      group.forEach((w, i) => w.resolve(outcomes[i]!));
    } finally {
      inFlight--;
      schedule();
      if (inFlight === 0 && waiting.length === 0) for (const settle of idle.splice(0)) settle();
    }
  }

  /** The items of a refused group, each as a statement of its own, one after another (a few connections are the groups' to hold). */
  async function oneByOne(group: Waiting<I, O>[]): Promise<void> {
    for (const w of group) {
      try {
        w.resolve(answered(await send([w.item]), 1)[0]!);
      } catch (error) {
        w.reject(error);
      }
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
