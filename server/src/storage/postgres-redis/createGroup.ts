// Creates without an idempotency key, gathered into one statement and one commit.
import type pg from 'pg';
import type { Job } from '../../domain/model.ts';
import type { ReserveOutcome } from '../../domain/ports.ts';
import { rowToBalance, type Row } from '../rows.ts';
import { guarded } from './database.ts';
import { byOrdinal, createStatementGroup, type StatementGroup } from './statementGroup.ts';

/**
 * Groups of creates under way at once. A commit is what a create pays most for on
 * PostgreSQL (the WAL flush it waits for), and the creates of one account wait for each
 * other on the period's ledger row anyway: so while this many groups are under way, the
 * creates that arrive wait for the next, which grows with the load. With the groups of
 * completions (2) and of account reads (2), they hold at most 8 of the pool's ten
 * connections: the claims, lease renewals, deliveries and files always find one soon.
 */
export const CREATE_GROUPS_IN_FLIGHT = 4;

/** At most this many creates in one statement, so that one group's statement stays small. */
export const CREATE_GROUP_MAX = 256;

/** The migration's function (version 12): each create decided in turn, the refused ones with the balance they were refused on. */
const CREATE_GROUP = 'SELECT n, accepted, quota, reserved, used FROM create_jobs_reserving($1::jsonb)';

export interface Create {
  job: Job;
  queuedAt: number;
}

/**
 * Every create asked before a group starts goes in it. The group is one statement, so it
 * commits or fails as a whole: a create refused for credits is an answer, not a failure,
 * and leaves the others accepted; a statement or commit that fails stores none of the
 * group's creates (no reservation without its job, no job without its reservation), and
 * its creates are then sent again one at a time if PostgreSQL refused it, or each fail
 * with its error (statementGroup.ts). Each caller hears only after the commit, so a
 * create it was told was accepted is stored.
 */
export function createCreateGroup(pool: pg.Pool): StatementGroup<Create, ReserveOutcome> {
  return createStatementGroup<Create, ReserveOutcome>(
    async (creates) => {
      const rows = creates.map(({ job, queuedAt }) => ({
        id: job.id, kind: job.kind, account_id: job.accountId, key_id: job.keyId, sandbox: job.sandbox, status: job.status, input: job.input,
        webhook_url: job.webhookUrl, credits: job.credits, period: job.period, created_at: job.createdAt, updated_at: job.updatedAt, queued_at: queuedAt,
      }));
      const result = await guarded(() => pool.query({ name: 'create-group', text: CREATE_GROUP, values: [JSON.stringify(rows)] }));
      return byOrdinal(result.rows as Row[], creates.length).map((row, i): ReserveOutcome => {
        const { job } = creates[i]!;
        return row.accepted ? { ok: true, job } : { ok: false, balance: rowToBalance(job.period, row) };
      });
    },
    { inFlight: CREATE_GROUPS_IN_FLIGHT, max: CREATE_GROUP_MAX },
  );
}
