// A job's last step: its terminal state, its credits and its webhook event, stored together.
import type { DomainDeps } from './deps.ts';
import { buildTerminalEvent } from './events.ts';
import type { EngineOutcome } from './engine.ts';
import type { Job } from './model.ts';

/**
 * Moves the job to `ready` (credits captured) or `failed` (credits released) and records
 * its webhook event in the same transaction. False when the job was already terminal:
 * the first outcome stands (ST-TERMINAL) and nothing is charged twice.
 */
export async function finishJob(deps: DomainDeps, job: Job, outcome: EngineOutcome): Promise<boolean> {
  // The record's times are the account's (its sandbox clock may be ahead of the service's).
  const account = await deps.store.accounts.getAccount(job.accountId);
  const serviceNow = deps.clock.now();
  const at = serviceNow + (account?.clockOffsetMs ?? 0);
  const done: Job = {
    ...job,
    status: outcome.status,
    error: outcome.status === 'failed' ? outcome.error : null,
    result: outcome.status === 'ready' ? outcome.result : null,
    updatedAt: at,
    completedAt: at,
  };
  const event = buildTerminalEvent(done, deps.publicBaseUrl, serviceNow);
  const changed = await deps.store.jobs.completeJob(job.id, { status: done.status as 'ready' | 'failed', error: done.error, result: done.result, at }, event);
  if (changed && event) deps.onWebhookRecorded?.();
  return changed;
}
