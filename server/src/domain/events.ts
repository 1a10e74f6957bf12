// Webhook events (ND-ENVELOPE): built once, when the job reaches its terminal state,
// and stored with that state (an outbox), so every attempt sends the stored bytes, all but
// the record's file links, which are signed as each attempt leaves (ND-FILE-LINKS).
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
 * service's clock, while the envelope's `created_at` is the account's time. The record's
 * file links are stored unsigned, as the job's record is: `eventBody` signs them.
 */
export function buildTerminalEvent(job: Job, publicBaseUrl: string, dueAt: number): OutboxEvent | null {
  if (!job.webhookUrl || (job.status !== 'ready' && job.status !== 'failed')) return null;
  const type = eventTypeFor(job);
  const id = eventIdFor(job.id, type);
  const envelope = {
    id,
    object: 'event',
    type,
    api_version: 'v1',
    created_at: new Date(job.completedAt ?? job.updatedAt).toISOString(),
    data: { object: toResource(job, publicBaseUrl) },
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

/**
 * The event's body as it leaves the service, in an attempt or in the delivery log: the
 * stored envelope, every byte as stored but the record's file links, signed by `links`
 * (ND-FILE-LINKS). An attempt signs them at its send, so a retry or a replay however late
 * carries links valid for their whole lifetime from it, and is signed over this body.
 */
export function eventBody(event: Pick<OutboxEvent, 'payload'>, links: FileLinkSigner): string {
  return links.json(event.payload);
}
