// Webhook events (ND-ENVELOPE): built once, when the job reaches its terminal state,
// and stored with that state (an outbox), so the sender only ever sends stored bytes.
import { eventIdFor } from './ids.ts';
import type { Job, OutboxEvent } from './model.ts';
import { destinationOf } from './webhookDestinations.ts';
import { toResource } from './serialize.ts';
import type { FileLinkSigner } from './fileLinks.ts';

export function eventTypeFor(job: Job): string {
  return `${job.kind}.${job.status}`;
}

/**
 * The event of a job that just became terminal, or null when it has no webhook_url.
 * `dueAt` is the service's time of the first attempt: the sender's schedule runs on the
 * service's clock, while the envelope's `created_at` is the account's time. `links` signs
 * the record's file links (ND-FILE-LINKS), valid for their lifetime from the job's end.
 */
export function buildTerminalEvent(job: Job, publicBaseUrl: string, dueAt: number, links?: FileLinkSigner): OutboxEvent | null {
  if (!job.webhookUrl || (job.status !== 'ready' && job.status !== 'failed')) return null;
  const type = eventTypeFor(job);
  const id = eventIdFor(job.id, type);
  const envelope = {
    id,
    object: 'event',
    type,
    api_version: 'v1',
    created_at: new Date(job.completedAt ?? job.updatedAt).toISOString(),
    data: { object: links ? links.record(toResource(job, publicBaseUrl)) : toResource(job, publicBaseUrl) },
  };
  return {
    id,
    type,
    jobId: job.id,
    accountId: job.accountId,
    url: job.webhookUrl,
    destination: destinationOf(job.webhookUrl),
    payload: JSON.stringify(envelope),
    status: 'pending',
    attempts: 0,
    nextAttemptAt: dueAt,
    lastError: null,
    createdAt: job.completedAt ?? job.updatedAt,
    deliveredAt: null,
    replay: false,
  };
}
