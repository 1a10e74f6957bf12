// The webhook delivery log and its replay (ND-WEBHOOK-LOG): an account reads its events
// and every attempt to deliver them (when, how long, the receiver's status or why none
// came, never the secret nor the signature), and asks for one new delivery of an event at
// rest. Why an attempt failed is shown as its category (attemptErrors.ts), never in the
// network's words; an event shows its last MAX_SHOWN_ATTEMPTS attempts and how many it had,
// and the stores keep its last MAX_KEPT_ATTEMPTS. The dispatcher writes the log, in the transaction of each attempt's outcome; a
// replay only marks the event due, and the dispatcher signs it afresh when it sends it.
// An event's payload is its body as an attempt sends it (events.ts's eventBody), its file
// links signed at this read as every read of a record signs them: a link shown is one that
// works, whenever the log is read.
import { shownAttemptsLimit } from '../../../contract/webhookLog.ts';
import type { components } from '../../../generated/openapi.ts';
import { shownAttemptError } from './attemptErrors.ts';
import type { Caller, DomainDeps } from './deps.ts';
import { DomainError, notFound } from './errors.ts';
import { eventBody } from './events.ts';
import { accountLinks, type FileLinkSigner } from './fileLinks.ts';
import { isEventId } from './ids.ts';
import { cursorAt, readListQuery, type ListFilter, type Query } from './lists.ts';
import type { Account, LoggedAttempt, OutboxEvent } from './model.ts';
import type { WebhookEventQuery } from './ports.ts';
import { iso, isoOrNull } from './serialize.ts';

export type WebhookEventResource = components['schemas']['WebhookEvent'];
export type WebhookEventList = components['schemas']['WebhookEventList'];

/**
 * Attempts an event shows at most, the latest: the contract's `maxItems` of
 * WebhookEvent's `attempts` (25). More than the longest retry schedule
 * (WEBHOOK_MAX_ATTEMPTS is at most 20), so a scheduled delivery's whole story is shown;
 * only replays, which an account can repeat at the generation bucket's rate, pass it,
 * and an event replayed hundreds of times must not make its answer (and a page of 100
 * such events) grow without bound.
 */
export const MAX_SHOWN_ATTEMPTS = shownAttemptsLimit();

/**
 * Attempts of one event a store keeps at most, the latest: each store deletes the older
 * ones as it records a new one, so an event replayed or retried without end holds a
 * bounded log (some 200 bytes an attempt) while `attempts_total` still counts every
 * attempt (the event's own count, kept apart). Twice what is shown, so that an answer read
 * while later attempts are recorded and older ones deleted still has the latest
 * MAX_SHOWN_ATTEMPTS of the moment it read.
 */
export const MAX_KEPT_ATTEMPTS = 2 * MAX_SHOWN_ATTEMPTS;

const STATUSES: readonly OutboxEvent['status'][] = ['pending', 'delivered', 'failed'];

type EventFilters = Pick<WebhookEventQuery, 'jobId' | 'status'>;

const FILTERS: readonly ListFilter<EventFilters>[] = [
  {
    param: 'job_id',
    read(value, into) {
      if (value.length < 1 || value.length > 64) return { field: 'job_id', rule: 'maxLength', message: 'must be 1 to 64 characters' };
      into.jobId = value;
      return undefined;
    },
  },
  {
    param: 'status',
    read(value, into) {
      if (!(STATUSES as readonly string[]).includes(value)) return { field: 'status', rule: 'enum', message: `must be one of ${STATUSES.join(', ')}` };
      into.status = value as OutboxEvent['status'];
      return undefined;
    },
  },
];

/**
 * The event as the account reads it. Times are the account's: the log and the envelope
 * are recorded on it already; the due time is kept on the service's time (the sender's
 * schedule), and the account's clock offset turns it into the account's.
 */
function toResource(event: OutboxEvent, attempts: readonly LoggedAttempt[], clockOffsetMs: number, links: FileLinkSigner): WebhookEventResource {
  return {
    id: event.id,
    object: 'webhook_event',
    type: event.type,
    job_id: event.jobId,
    url: event.url,
    status: event.status,
    created_at: iso(event.createdAt),
    next_attempt_at: event.status === 'pending' ? iso(event.nextAttemptAt + clockOffsetMs) : null,
    delivered_at: isoOrNull(event.deliveredAt),
    attempts: attempts.slice(-MAX_SHOWN_ATTEMPTS).map((a) => {
      const failure = a.error === null ? null : shownAttemptError(a.error, a.statusCode);
      return {
        number: a.number,
        trigger: a.trigger,
        started_at: iso(a.startedAt),
        duration_ms: a.durationMs,
        status_code: a.statusCode,
        error: failure?.message ?? null,
        error_code: failure?.code ?? null,
        succeeded: a.error === null,
        signature_headers: a.standardWebhooks ? ['X-Service-Signature', 'webhook-signature'] : ['X-Service-Signature'],
      };
    }),
    attempts_total: event.attempts,
    payload: JSON.parse(eventBody(event, links)) as Record<string, unknown>,
  };
}

/**
 * The events with their attempts, read in one query for all of them. An attempt may be
 * recorded between the two reads; each is recorded with its number, in the same step as
 * the event's count, so the attempts numbered up to the event's count are the ones it had
 * when read and the answer is the state of one moment, not a pending event with its
 * retry's outcome.
 */
async function withAttempts(deps: DomainDeps, events: readonly OutboxEvent[], account: Pick<Account, 'clockOffsetMs'>): Promise<WebhookEventResource[]> {
  const attempts = await deps.store.outbox.attemptsOf(events.map((e) => e.id));
  const byEvent = Map.groupBy(attempts, (a) => a.eventId);
  const links = accountLinks(deps, account);
  return events.map((event) => toResource(event, (byEvent.get(event.id) ?? []).filter((a) => a.number <= event.attempts), account.clockOffsetMs, links));
}

/** The account's events, newest first, a page at a time, as the other lists page (ND-LISTS). */
export async function listWebhookEvents(deps: DomainDeps, caller: Caller, query: Query): Promise<WebhookEventList> {
  const parsed = readListQuery<EventFilters>(query, FILTERS);
  // One more than the page: whether it exists is has_more.
  const found = await deps.store.outbox.listEvents({ accountId: caller.account.id, ...parsed, limit: parsed.limit + 1 });
  const events = found.slice(0, parsed.limit);
  const hasMore = found.length > parsed.limit;
  return {
    object: 'list',
    data: await withAttempts(deps, events, caller.account),
    has_more: hasMore,
    next_cursor: hasMore ? cursorAt(events.at(-1)!) : null,
  };
}

/** One event of the account with its attempts; another account's is "not found", as the jobs are. */
export async function getWebhookEvent(deps: DomainDeps, caller: Caller, id: string): Promise<WebhookEventResource> {
  const event = isEventId(id) ? await deps.store.outbox.getEvent(id) : null;
  if (!event || event.accountId !== caller.account.id) throw notFound('webhook event', id);
  const [resource] = await withAttempts(deps, [event], caller.account);
  return resource!;
}

/**
 * Asks for one new delivery of a delivered or failed event, due now. A pending event
 * (an attempt due or in flight) is refused rather than sent twice; the store makes the
 * check and the change one step, so of two replays at once one is refused. Costs no credits.
 */
export async function replayWebhookEvent(deps: DomainDeps, caller: Caller, id: string): Promise<WebhookEventResource> {
  if (!isEventId(id)) throw notFound('webhook event', id);
  const outcome = await deps.store.outbox.requestReplay(caller.account.id, id, deps.clock.now());
  if (!outcome.ok && outcome.reason === 'not_found') throw notFound('webhook event', id);
  if (!outcome.ok) {
    const due = iso(outcome.event.nextAttemptAt + caller.account.clockOffsetMs);
    throw new DomainError('webhook_event_pending', `Event ${id} is pending (an attempt is due at ${due} or in flight); replay it once it is delivered or failed.`);
  }
  deps.onWebhookRecorded?.();
  const [resource] = await withAttempts(deps, [outcome.event], caller.account);
  return resource!;
}
