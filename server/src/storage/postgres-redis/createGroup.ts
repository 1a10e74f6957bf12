// Creates without an idempotency key, gathered into one statement and one commit.
import type pg from 'pg';
import type { Job } from '../../domain/model.ts';
import type { ReserveOutcome } from '../../domain/ports.ts';
import { rowToBalance } from '../rows.ts';
import { guarded } from './database.ts';

/**
 * Groups of creates under way at once. A commit is what a create pays most for on
 * PostgreSQL (the WAL flush it waits for), and the creates of one account wait for each
 * other on the period's ledger row anyway: so while this many groups are under way, the
 * creates that arrive wait for the next, which grows with the load. Four leave the rest
 * of the pool's ten connections to the reads, the claims and the completions.
 */
export const CREATE_GROUPS_IN_FLIGHT = 4;

/** At most this many creates in one statement, so that one group's statement stays small. */
export const CREATE_GROUP_MAX = 256;

/** The migration's function (version 12): each create decided in turn, the refused ones with the balance they were refused on. */
const CREATE_GROUP = 'SELECT n, accepted, quota, reserved, used FROM create_jobs_reserving($1::jsonb)';

interface Waiting {
  job: Job;
  queuedAt: number;
  resolve(outcome: ReserveOutcome): void;
  reject(error: unknown): void;
}

export interface CreateGroup {
  /** Creates the job and reserves its credits, or refuses it with the balance, as one create alone would. */
  create(job: Job, queuedAt: number): Promise<ReserveOutcome>;
  /** Settles once every create asked so far has been answered. */
  drain(): Promise<void>;
}

/**
 * Every create asked before a group starts goes in it. The group is one statement (one
 * round trip), so it commits or fails as a whole: a create refused for credits is an
 * answer, not a failure, and leaves the others accepted; a statement or commit that fails
 * fails every create of the group with its error, and none of them is stored (no
 * reservation without its job, no job without its reservation). Each caller hears only
 * after the commit, so a create it was told was accepted is stored.
 */
export function createCreateGroup(pool: pg.Pool): CreateGroup {
  const waiting: Waiting[] = [];
  let inFlight = 0;
  let scheduled = false;
  const idle: (() => void)[] = [];

  function schedule(): void {
    if (scheduled || waiting.length === 0 || inFlight >= CREATE_GROUPS_IN_FLIGHT) return;
    scheduled = true;
    // A turn of the event loop first: the creates whose requests were read together join.
    setImmediate(() => {
      scheduled = false;
      while (waiting.length > 0 && inFlight < CREATE_GROUPS_IN_FLIGHT) void run(waiting.splice(0, CREATE_GROUP_MAX));
    });
  }

  async function run(group: Waiting[]): Promise<void> {
    inFlight++;
    try {
      const rows = group.map(({ job, queuedAt }) => ({
        id: job.id, kind: job.kind, account_id: job.accountId, key_id: job.keyId, sandbox: job.sandbox, status: job.status, input: job.input,
        webhook_url: job.webhookUrl, credits: job.credits, period: job.period, created_at: job.createdAt, updated_at: job.updatedAt, queued_at: queuedAt,
      }));
      let result: pg.QueryResult;
      try {
        result = await guarded(() => pool.query({ name: 'create-group', text: CREATE_GROUP, values: [JSON.stringify(rows)] }));
      } catch (error) {
        for (const w of group) w.reject(error);
        return;
      }
      const answered = new Array<boolean>(group.length).fill(false);
      for (const row of result.rows) {
        const i = Number(row.n) - 1;
        const w = group[i]!;
        answered[i] = true;
        w.resolve(row.accepted ? { ok: true, job: w.job } : { ok: false, balance: rowToBalance(w.job.period, row) });
      }
      // The function answers every create it was given; one it did not is not known to be stored.
      const lost = new Error('the grouped create answered no outcome for this job');
      group.forEach((w, i) => answered[i] || w.reject(lost));
    } finally {
      inFlight--;
      schedule();
      if (inFlight === 0 && waiting.length === 0) for (const settle of idle.splice(0)) settle();
    }
  }

  return {
    create(job, queuedAt) {
      return new Promise<ReserveOutcome>((resolve, reject) => {
        waiting.push({ job, queuedAt, resolve, reject });
        schedule();
      });
    },
    drain() {
      if (inFlight === 0 && waiting.length === 0) return Promise.resolve();
      return new Promise<void>((resolve) => idle.push(resolve));
    },
  };
}
