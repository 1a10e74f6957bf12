// Sends the outbox's webhook events (WH-*): the stored bytes with the record's file links
// signed at each attempt (events.ts's eventBody), the signature over the bytes sent, retried
// with backoff, given up after the last attempt. Job state and credits are never
// touched here (CR-WEBHOOK-INDEPENDENT): this code only reads jobs' events. Every
// attempt goes to the delivery log with its outcome (ND-WEBHOOK-LOG), told as its
// category's sentence; a replay the account asked for is one attempt, signed afresh,
// never retried. An address the mode refuses ends the event at once: the refusal is
// the rule's, not the receiver's, and would be the same on every retry.
import type { Logger } from 'pino';
import {
  STANDARD_WEBHOOK_ID_HEADER,
  STANDARD_WEBHOOK_SIGNATURE_HEADER,
  STANDARD_WEBHOOK_TIMESTAMP_HEADER,
  WEBHOOK_EVENT_ID_HEADER,
  WEBHOOK_SIGNATURE_HEADER,
  WEBHOOK_TIMESTAMP_HEADER,
  signStandardWebhook,
  signWebhook,
} from '../../../contract/webhookSignature.ts';
import { attemptErrorText } from '../domain/attemptErrors.ts';
import type { Clock } from '../domain/clock.ts';
import { eventBody } from '../domain/events.ts';
import { accountLinks } from '../domain/fileLinks.ts';
import type { AttemptLog, ClaimedEvent, OutboxEvent } from '../domain/model.ts';
import { destinationHealth, type DeliveryFairness, type DestinationHealth } from '../domain/webhookDestinations.ts';
import { retryDelayMs } from '../domain/webhookSchedule.ts';
import type { ServiceMode } from '../domain/webhookUrl.ts';
import type { Metrics } from '../metrics.ts';
import { errorForLog, type Delivered, type Store } from '../domain/ports.ts';
import { createBatcher } from './batcher.ts';
import { deliverOnce, systemResolver, type Resolver } from './deliver.ts';
import { createPump } from './pump.ts';

export interface DispatcherOptions {
  mode: ServiceMode;
  timeoutMs: number;
  maxAttempts: number;
  baseDelayMs: number;
  /** Deliveries in flight at once; a slow receiver holds one slot, not the others. */
  concurrency: number;
  /** Deliveries in flight to one destination at most (on every sender together). */
  perDestination: number;
  /** Failures in a row after which a destination gets one attempt at a time. */
  circuitFailures: number;
  pollMs: number;
  resolve?: Resolver;
  random?: () => number;
  /** The key file links are signed with (ND-FILE-LINKS), every process's one. */
  fileLinkKey: string;
}

export interface WebhookDispatcher {
  start(): void;
  wake(): void;
  stop(): Promise<void>;
}

export function createWebhookDispatcher(store: Store, clock: Clock, options: DispatcherOptions, log: Logger, metrics?: Metrics): WebhookDispatcher {
  const inFlight = new Set<Promise<void>>();
  const fairness: DeliveryFairness = { perDestination: options.perDestination, circuitFailures: options.circuitFailures };
  const pump = createPump(
    async () => {
      const room = options.concurrency - inFlight.size;
      if (room <= 0) return;
      const now = clock.now();
      // The lease outlives one attempt, so a second dispatcher never sends it at the same time.
      // Each event comes with its account's signing secret, read in the claim itself.
      const due = await store.outbox.claimDueEvents(now, room, now + options.timeoutMs * 2 + 5000, fairness);
      for (const event of due) track(event);
      if (due.length === room) {
        pump.wake(); // there may be more: one more pass, which also looks for later ones
        return;
      }
      // Events due now but not claimed (held by an attempt, or waiting for their
      // destination's room) are not waited on: that would be a busy loop. A settled
      // attempt wakes the pump instead; the timer is for retries scheduled for later.
      const next = await store.outbox.nextDueAfter(clock.now());
      if (next !== null) armDueTimer(next);
    },
    options.pollMs,
    (error) => log.warn({ err: errorForLog(error) }, 'could not read the webhook outbox; retrying'),
  );
  // Deliveries are recorded together: under load, one write for the attempts that ended meanwhile.
  const delivered = createBatcher<Delivered>((batch) => store.outbox.markDelivered(batch));
  let dueTimer: NodeJS.Timeout | undefined;
  let dueAt = Number.POSITIVE_INFINITY;

  async function attempt(event: ClaimedEvent): Promise<void> {
    const account = event.sender;
    const attempts = event.attempts + 1;
    const startedAt = clock.now();
    // Signed now, for this attempt: every retry and every replay carries its own timestamp.
    const timestamp = Math.floor(startedAt / 1000);
    // Its file links too, on the account's time as it stands: valid for their whole lifetime from this attempt.
    const body = account ? eventBody(event, accountLinks({ clock, fileLinkKey: options.fileLinkKey }, account)) : event.payload;
    const result = account
      ? await deliverOnce(
          event.url,
          body,
          {
            'Content-Type': 'application/json',
            'User-Agent': 'avatar-service-webhooks/1',
            [WEBHOOK_EVENT_ID_HEADER]: event.id,
            [WEBHOOK_TIMESTAMP_HEADER]: String(timestamp),
            [WEBHOOK_SIGNATURE_HEADER]: signWebhook(account.signingSecret, timestamp, body),
            // An opted-in account gets the same ID, time and bytes signed under Standard
            // Webhooks as well (ND-STANDARD-WEBHOOKS); the headers above never change.
            ...(account.standardWebhooks
              ? {
                  [STANDARD_WEBHOOK_ID_HEADER]: event.id,
                  [STANDARD_WEBHOOK_TIMESTAMP_HEADER]: String(timestamp),
                  [STANDARD_WEBHOOK_SIGNATURE_HEADER]: signStandardWebhook(account.signingSecret, event.id, timestamp, body),
                }
              : {}),
          },
          { mode: options.mode, timeoutMs: options.timeoutMs, resolve: options.resolve ?? systemResolver },
        )
      : ({ ok: false, status: null, error: 'account_closed', detail: 'account no longer exists', attempted: false } as const);
    const endedAt = clock.now();
    // The log shows the account's times, as every record does; the signature keeps the service's.
    const offset = account?.clockOffsetMs ?? 0;
    const logged: AttemptLog = {
      trigger: event.replay ? 'replay' : 'scheduled',
      startedAt: startedAt + offset,
      durationMs: Math.max(0, endedAt - startedAt),
      statusCode: result.status,
      error: result.ok ? null : attemptErrorText(result.error, result.status),
      standardWebhooks: account?.standardWebhooks === true,
    };

    if (result.ok) {
      await delivered.add({ eventId: event.id, at: endedAt + offset, attempts, attempt: logged });
      metrics?.webhookDeliveries.inc({ outcome: 'delivered' });
      log.info({ eventId: event.id, type: event.type, attempts, status: result.status }, 'webhook delivered');
      return;
    }
    const health = destinationHealth(result.attempted, result.status);
    if (event.replay) {
      // A replay is the one attempt the account asked for: it is not retried.
      noteFailures(event, health, await store.outbox.markFailed(event.id, attempts, logged, health));
      metrics?.webhookDeliveries.inc({ outcome: 'replay_failed' });
      log.info({ eventId: event.id, type: event.type, attempts, error: result.detail }, 'webhook replay failed; not retried');
      return;
    }
    if (result.error === 'refused_by_policy') {
      noteFailures(event, health, await store.outbox.markFailed(event.id, attempts, logged, health));
      metrics?.webhookDeliveries.inc({ outcome: 'refused' });
      log.warn({ eventId: event.id, type: event.type, attempts, error: result.detail }, 'webhook refused by the address rules; not retried');
      return;
    }
    const delay = retryDelayMs(attempts, options.maxAttempts, options.baseDelayMs, options.random);
    if (delay === null) {
      noteFailures(event, health, await store.outbox.markFailed(event.id, attempts, logged, health));
      metrics?.webhookDeliveries.inc({ outcome: 'given_up' });
      log.warn({ eventId: event.id, type: event.type, attempts, error: result.detail }, 'webhook given up after the last attempt; polling remains the source of truth');
      return;
    }
    const retry = { at: clock.now() + delay, clockOffsetMs: account?.clockOffsetMs ?? 0 };
    noteFailures(event, health, await store.outbox.scheduleRetry(event.id, attempts, retry, logged, health));
    metrics?.webhookDeliveries.inc({ outcome: 'retry' });
    log.info({ eventId: event.id, attempts, retryInMs: delay, error: result.detail }, 'webhook attempt failed; will retry');
    armDueTimer(clock.now() + delay);
  }

  /** Says once, when it happens, that a destination is down to one attempt at a time. */
  function noteFailures(event: OutboxEvent, health: DestinationHealth, failuresInARow: number): void {
    if (health === 'down' && failuresInARow === options.circuitFailures) {
      metrics?.webhookCircuitsOpened.inc();
      log.warn({ destination: event.destination, failuresInARow }, 'webhook destination keeps failing; one attempt at a time until it answers again');
    }
  }

  function track(event: ClaimedEvent): void {
    const p: Promise<void> = attempt(event)
      .catch((error) => log.error({ err: errorForLog(error), eventId: event.id }, 'webhook bookkeeping failed; the event lease will expire and it will be retried'))
      .finally(() => {
        inFlight.delete(p);
        pump.wake();
      });
    inFlight.add(p);
  }

  /** Wakes the pump when the earliest scheduled retry is due, not only on the next poll. */
  function armDueTimer(at: number): void {
    const wait = Math.max(0, at - clock.now());
    if (at >= dueAt || wait >= options.pollMs) return; // an earlier wake-up, or the poll, gets there first
    clearTimeout(dueTimer);
    dueAt = at;
    dueTimer = setTimeout(() => {
      dueAt = Number.POSITIVE_INFINITY;
      pump.wake();
    }, wait);
    dueTimer.unref();
  }

  return {
    start: pump.start,
    wake: pump.wake,
    async stop() {
      await pump.stop(); // a claim under way ends first, so what it claims is waited for too
      clearTimeout(dueTimer);
      await Promise.all(inFlight);
      await delivered.drain();
    },
  };
}
