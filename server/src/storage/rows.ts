// Database rows to domain records, for both adapters: accounts and keys, jobs, events,
// attempts and idempotency keys. SQLite hands JSON columns back as text and booleans as
// 0/1; PostgreSQL as parsed JSON and booleans, and big numbers as text: the readers
// below accept either, so the mapping is written once and no adapter keeps its own.
import type { Account, ApiKey, AttemptTrigger, ClaimedEvent, CreditBalance, Job, LoggedAttempt, OutboxEvent, RatePlan } from '../domain/model.ts';
import type { CreditsChanged, IdempotentRequest } from '../domain/ports.ts';
import { readCredits } from '../domain/credits.ts';

export type Row = Record<string, unknown>;

// PostgreSQL hands BIGINT and NUMERIC columns back as text: every number is read through these.
export const num = (v: unknown): number => Number(v);
export const numOrNull = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));
const textOrNull = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));
const jsonOrNull = <T>(v: unknown): T | null => (v === null || v === undefined ? null : ((typeof v === 'string' ? JSON.parse(v) : v) as T));

/** An account's row; `id` names its ID where a join renamed the column (`account_id`). */
export function rowToAccount(row: Row, id: unknown = row.id): Account {
  return {
    id: String(id),
    name: String(row.name),
    monthlyCredits: readCredits(row.monthly_credits).credits,
    plan: jsonOrNull<RatePlan>(row.plan)!,
    signingSecret: String(row.signing_secret),
    createdAt: num(row.created_at),
    clockOffsetMs: num(row.clock_offset_ms ?? 0),
    ownerId: textOrNull(row.owner_id),
    standardWebhooks: row.standard_webhooks === true || Number(row.standard_webhooks ?? 0) === 1,
  };
}

/** A key's columns as both stores' key lookup names them beside its account's. */
export function rowToKey(row: Row): ApiKey {
  return {
    id: String(row.key_id),
    accountId: String(row.account_id),
    mode: row.mode as ApiKey['mode'],
    prefix: String(row.prefix),
    createdAt: num(row.key_created_at),
    revokedAt: numOrNull(row.revoked_at),
  };
}

/** An account's credits in `period` from its `quota`, `reserved` and `used` (no row: an account that does not exist has none). */
export function rowToBalance(period: string, row: Row | undefined): CreditBalance {
  const { credits: quota, held } = readCredits(row ? row.quota : 0);
  const reserved = row ? num(row.reserved) : 0;
  const used = row ? num(row.used) : 0;
  return { period, quota, reserved, used, available: Math.max(0, quota - reserved - used), ...(held === undefined ? {} : { held }) };
}

/** A change to credits refused, from the row of the month it would take past the bound: its `period`, `monthly_credits` and `granted`. */
export function rowToCreditsRefusal(row: Row): CreditsChanged {
  return { ok: false, reason: 'beyond_bound', period: String(row.period), monthly: readCredits(row.monthly_credits).credits, granted: readCredits(row.granted).credits };
}

export function rowToJob(row: Row): Job {
  return {
    id: String(row.id),
    kind: row.kind as Job['kind'],
    accountId: String(row.account_id),
    keyId: String(row.key_id),
    sandbox: row.sandbox === true || Number(row.sandbox) === 1,
    status: row.status as Job['status'],
    input: jsonOrNull<Job['input']>(row.input)!,
    webhookUrl: textOrNull(row.webhook_url),
    credits: num(row.credits),
    period: String(row.period),
    error: jsonOrNull(row.error),
    result: jsonOrNull(row.result),
    createdAt: num(row.created_at),
    updatedAt: num(row.updated_at),
    completedAt: numOrNull(row.completed_at),
    attempts: num(row.attempts),
  };
}

export function rowToEvent(row: Row): OutboxEvent {
  return {
    id: String(row.id),
    type: String(row.type),
    jobId: String(row.job_id),
    accountId: String(row.account_id),
    url: String(row.url),
    destination: String(row.destination),
    payload: String(row.payload),
    status: row.status as OutboxEvent['status'],
    attempts: num(row.attempts),
    nextAttemptAt: num(row.next_attempt_at),
    lastError: textOrNull(row.last_error),
    createdAt: num(row.created_at),
    deliveredAt: numOrNull(row.delivered_at),
    replay: row.replay === true || Number(row.replay) === 1,
  };
}

/** A claimed event's row, joined to its account's `signing_secret`, `clock_offset_ms` and `standard_webhooks` (null when the account is gone). */
export function rowToClaimed(row: Row): ClaimedEvent {
  const sender = row.signing_secret === null || row.signing_secret === undefined ? null : { signingSecret: String(row.signing_secret), clockOffsetMs: num(row.clock_offset_ms ?? 0), standardWebhooks: row.standard_webhooks === true || Number(row.standard_webhooks) === 1 };
  return { ...rowToEvent(row), sender };
}

/** The attempts of events as both stores keep them, in the order they were recorded, each with its number among its event's. */
export function rowsToAttempts(rows: Row[]): LoggedAttempt[] {
  return rows.map((row) => {
    return {
      eventId: String(row.event_id),
      number: num(row.number),
      trigger: row.trigger as AttemptTrigger,
      startedAt: num(row.started_at),
      durationMs: num(row.duration_ms),
      statusCode: numOrNull(row.status_code),
      error: textOrNull(row.error),
      standardWebhooks: row.standard_webhooks === true || Number(row.standard_webhooks) === 1,
    };
  });
}

/** An idempotency key as both stores keep it. */
export function rowToIdempotentRequest(row: Row): IdempotentRequest {
  return {
    key: String(row.key),
    fingerprint: String(row.fingerprint),
    jobId: String(row.job_id),
    response: String(row.response),
    createdAt: num(row.created_at),
    expiresAt: num(row.expires_at),
  };
}
