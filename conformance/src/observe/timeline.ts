// What a run saw over time, kept for the reports' pictures: each webhook event's
// attempts against the schedule the implementation documents, each key's RateLimit-
// Remaining in each bucket, and how long each job took by kind. Times are milliseconds
// from the run's start, so that a report reads the same whatever the runner's clock.
import type { Exchange } from '../http.ts';
import type { JobKind } from '../implementation/profile.ts';
import type { Delivery } from '../receiver/server.ts';
import { advertised, limitedAnswers } from './rate-limit-headers.ts';

export interface WebhookAttemptsSeen {
  /** The job the webhook URL was made for. */
  label: string;
  /** The event type as the implementation spells it, or "" when it shows none. */
  type: string;
  attempts: { atMs: number; answered: number }[];
}

export interface RemainingSeen {
  key: string;
  bucket: string;
  points: { atMs: number; remaining: number; limit: number; resetSeconds: number; status: number }[];
}

export interface JobSeen {
  label: string;
  kind: JobKind;
  ended: string;
  /** How the run asked it to end: a job failed on purpose (the failure marker) is drawn as intended. */
  expected?: 'ready' | 'failed' | 'any';
  /** From the create's answer to the first terminal read. */
  durationMs: number;
}

export interface Observations {
  /** The retry schedule the run held webhooks to, if it knew one: the wait before each retry. */
  schedule?: { delaysSeconds: number[]; jitter: number };
  webhooks: WebhookAttemptsSeen[];
  remaining: RemainingSeen[];
  jobs: JobSeen[];
}

export interface TimelineInput {
  startedAt: number;
  log: readonly Exchange[];
  deliveries: readonly Delivery[];
  eventType: (delivery: Delivery) => unknown;
  jobs: readonly { label: string; kind: JobKind; ended: string | undefined; expected?: 'ready' | 'failed' | 'any'; answeredAt: number; terminalAt: number | undefined }[];
  schedule: { delaysSeconds: number[]; jitter: number } | undefined;
}

export function timeline(input: TimelineInput): Observations {
  const { startedAt } = input;
  const events = new Map<string, WebhookAttemptsSeen>();
  // A copy of an attempt moments later is the source's at-least-once, not a retry: not drawn as one.
  for (const delivery of input.deliveries.filter((d) => !d.duplicate)) {
    const type = input.eventType(delivery);
    const name = typeof type === 'string' ? type : '';
    const id = `${delivery.label}\u0000${name}`;
    let event = events.get(id);
    if (!event) events.set(id, (event = { label: delivery.label, type: name, attempts: [] }));
    event.attempts.push({ atMs: delivery.receivedAt - startedAt, answered: delivery.answered });
  }
  const remaining = new Map<string, RemainingSeen>();
  for (const exchange of limitedAnswers(input.log)) {
    const seen = advertised(exchange);
    if (!seen) continue;
    const id = `${exchange.key}\u0000${exchange.bucket}`;
    let series = remaining.get(id);
    if (!series) remaining.set(id, (series = { key: exchange.key, bucket: exchange.bucket!, points: [] }));
    series.points.push({ atMs: exchange.startedAt + exchange.durationMs - startedAt, remaining: seen.remaining, limit: seen.limit, resetSeconds: seen.reset, status: exchange.status });
  }
  for (const series of remaining.values()) series.points.sort((a, b) => a.atMs - b.atMs);
  const jobs = input.jobs
    .filter((job) => job.terminalAt !== undefined && job.ended !== undefined)
    .map((job) => ({ label: job.label, kind: job.kind, ended: job.ended!, ...(job.expected ? { expected: job.expected } : {}), durationMs: job.terminalAt! - job.answeredAt }));
  return {
    ...(input.schedule ? { schedule: input.schedule } : {}),
    webhooks: [...events.values()],
    remaining: [...remaining.values()],
    jobs,
  };
}
