// Completions of jobs, gathered into one statement and one commit.
import type pg from 'pg';
import type { OutboxEvent } from '../../domain/model.ts';
import type { Completion } from '../../domain/ports.ts';
import type { Row } from '../rows.ts';
import { guarded } from './database.ts';
import { byOrdinal, createStatementGroup, type StatementGroup } from './statementGroup.ts';

/**
 * Groups of completions under way at once: the jobs a runner claimed together finish
 * together, and two leave the pool's connections to the creates and the reads.
 */
export const COMPLETE_GROUPS_IN_FLIGHT = 2;

/** At most this many completions in one statement. */
export const COMPLETE_GROUP_MAX = 256;

/** The migration's function (version 13): each completion decided as one alone, true for the jobs it moved. */
const COMPLETE_GROUP = 'SELECT n, moved FROM complete_jobs($1::jsonb)';

export interface Completing {
  jobId: string;
  completion: Completion;
  event: OutboxEvent | null;
}

/**
 * Every completion asked before a group starts goes in it, as one statement: it commits
 * or fails as a whole, and a completion of a job already terminal is an answer (false),
 * not a failure. A statement or commit that fails stores none of the group's completions;
 * they are then sent again one at a time if PostgreSQL refused it, or each fail
 * (statementGroup.ts): a job whose completion failed keeps its lease, which expires, and
 * is run again, as after any completion that failed.
 */
export function createCompleteGroup(pool: pg.Pool): StatementGroup<Completing, boolean> {
  return createStatementGroup<Completing, boolean>(
    async (completions) => {
      const rows = completions.map(({ jobId, completion: c, event: e }) => ({
        job_id: jobId, status: c.status, error: c.error, result: c.result, at: c.at,
        event: e && {
          id: e.id, type: e.type, job_id: e.jobId, account_id: e.accountId, url: e.url, destination: e.destination, payload: e.payload, status: e.status,
          attempts: e.attempts, next_attempt_at: e.nextAttemptAt, last_error: e.lastError, created_at: e.createdAt, delivered_at: e.deliveredAt,
        },
      }));
      const result = await guarded(() => pool.query({ name: 'complete-group', text: COMPLETE_GROUP, values: [JSON.stringify(rows)] }));
      return byOrdinal(result.rows as Row[], completions.length).map((row) => row.moved === true);
    },
    { inFlight: COMPLETE_GROUPS_IN_FLIGHT, max: COMPLETE_GROUP_MAX },
  );
}
