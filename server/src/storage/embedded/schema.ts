// Versioned migrations of the embedded store. PRAGMA user_version records how many
// have run; each runs once, in its own transaction.
export const MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE accounts (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    monthly_credits INTEGER NOT NULL CHECK (monthly_credits >= 0),
    plan TEXT NOT NULL,
    signing_secret TEXT NOT NULL,
    created_at INTEGER NOT NULL
  );
  CREATE TABLE api_keys (
    id TEXT PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES accounts(id),
    mode TEXT NOT NULL CHECK (mode IN ('sandbox', 'live')),
    prefix TEXT NOT NULL,
    hash TEXT NOT NULL UNIQUE,
    created_at INTEGER NOT NULL,
    revoked_at INTEGER
  );
  -- One row per account and month: what is held and what was charged. Updated in the
  -- same transaction as the job it concerns, so it never drifts from the jobs.
  CREATE TABLE credit_ledger (
    account_id TEXT NOT NULL REFERENCES accounts(id),
    period TEXT NOT NULL,
    granted INTEGER NOT NULL DEFAULT 0,
    reserved INTEGER NOT NULL DEFAULT 0 CHECK (reserved >= 0),
    used INTEGER NOT NULL DEFAULT 0 CHECK (used >= 0),
    PRIMARY KEY (account_id, period)
  );
  CREATE TABLE jobs (
    id TEXT PRIMARY KEY,
    kind TEXT NOT NULL CHECK (kind IN ('avatar', 'avatar_video')),
    account_id TEXT NOT NULL REFERENCES accounts(id),
    key_id TEXT NOT NULL,
    sandbox INTEGER NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('queued', 'processing', 'ready', 'failed')),
    input TEXT NOT NULL,
    webhook_url TEXT,
    credits INTEGER NOT NULL,
    period TEXT NOT NULL,
    error TEXT,
    result TEXT,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    completed_at INTEGER,
    attempts INTEGER NOT NULL DEFAULT 0,
    lease_owner TEXT,
    lease_until INTEGER
  );
  CREATE INDEX jobs_runnable ON jobs (status, created_at) WHERE status IN ('queued', 'processing');
  CREATE TABLE webhook_events (
    id TEXT PRIMARY KEY,
    type TEXT NOT NULL,
    job_id TEXT NOT NULL REFERENCES jobs(id),
    account_id TEXT NOT NULL,
    url TEXT NOT NULL,
    payload TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('pending', 'delivered', 'failed')),
    attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt_at INTEGER NOT NULL,
    lease_until INTEGER,
    last_error TEXT,
    created_at INTEGER NOT NULL,
    delivered_at INTEGER
  );
  CREATE INDEX webhook_events_due ON webhook_events (next_attempt_at) WHERE status = 'pending';
  CREATE TABLE rate_counters (
    key_id TEXT NOT NULL,
    bucket TEXT NOT NULL,
    window TEXT NOT NULL,
    window_start INTEGER NOT NULL,
    count INTEGER NOT NULL,
    PRIMARY KEY (key_id, bucket, window)
  );
  `,
  `
  -- The sandbox clock: how far the account's time is ahead of the service's.
  ALTER TABLE accounts ADD COLUMN clock_offset_ms INTEGER NOT NULL DEFAULT 0 CHECK (clock_offset_ms >= 0);
  `,
  `
  -- Fair delivery: each event's destination (host:port), the attempts in flight found by
  -- their lease, and the failures in a row of each destination that has failed lately.
  -- Events stored before this version are grouped by their whole URL.
  ALTER TABLE webhook_events ADD COLUMN destination TEXT NOT NULL DEFAULT '';
  UPDATE webhook_events SET destination = url WHERE destination = '';
  CREATE INDEX webhook_events_leased ON webhook_events (lease_until) WHERE status = 'pending' AND lease_until IS NOT NULL;
  CREATE INDEX webhook_events_destination ON webhook_events (destination, next_attempt_at) WHERE status = 'pending';
  CREATE TABLE webhook_destinations (
    destination TEXT PRIMARY KEY,
    failures INTEGER NOT NULL CHECK (failures > 0)
  );
  `,
  `
  -- Idempotency keys: one row per key that created a job, written in that job's transaction.
  CREATE TABLE idempotency_keys (
    account_id TEXT NOT NULL REFERENCES accounts(id),
    key TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    job_id TEXT NOT NULL REFERENCES jobs(id),
    response TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    PRIMARY KEY (account_id, key)
  );
  CREATE INDEX idempotency_keys_expiry ON idempotency_keys (expires_at);
  `,
  `
  -- Lists: an account's jobs of one kind, newest first.
  CREATE INDEX jobs_by_account ON jobs (account_id, kind, created_at DESC, id DESC);
  `,
  `
  -- The delivery log: every attempt, written in the transaction that records its outcome
  -- (its number is its place in the event's log, read back in id order), an account's
  -- events newest first, and the flag of a replay asked for.
  CREATE TABLE webhook_attempts (
    id INTEGER PRIMARY KEY,
    event_id TEXT NOT NULL REFERENCES webhook_events(id),
    trigger TEXT NOT NULL CHECK (trigger IN ('scheduled', 'replay')),
    started_at INTEGER NOT NULL,
    duration_ms INTEGER NOT NULL CHECK (duration_ms >= 0),
    status_code INTEGER,
    error TEXT
  );
  CREATE INDEX webhook_attempts_by_event ON webhook_attempts (event_id, id);
  CREATE INDEX webhook_events_by_account ON webhook_events (account_id, created_at DESC, id DESC);
  ALTER TABLE webhook_events ADD COLUMN replay INTEGER NOT NULL DEFAULT 0;
  `,
  `
  -- The queue's order on the service's time: created_at is the account's time, and
  -- accounts' clocks differ, so ordering by it put a job behind every job of an account
  -- whose clock is behind. Jobs stored before this version get the service time their
  -- account's offset gives now (exact unless the clock moved since they were made).
  ALTER TABLE jobs ADD COLUMN queued_at INTEGER NOT NULL DEFAULT 0;
  UPDATE jobs SET queued_at = created_at - COALESCE((SELECT clock_offset_ms FROM accounts WHERE accounts.id = jobs.account_id), 0);
  DROP INDEX jobs_runnable;
  CREATE INDEX jobs_runnable ON jobs (status, queued_at) WHERE status IN ('queued', 'processing');
  `,
  `
  -- The cap on an account's time (ND-SANDBOX-CLOCK: 100 years, 3,155,760,000 s, as it
  -- stood when this ran): a clock moved past it before the cap existed comes back to it,
  -- the one way back for an account whose times had left RFC 3339 or JavaScript's dates.
  UPDATE accounts SET clock_offset_ms = 3155760000000 WHERE clock_offset_ms > 3155760000000;
  `,
  `
  -- Workspaces: an account with an owner is a workspace of that owner account, with its
  -- own keys, credits and limits. Every account stored before this version is an owner
  -- with no workspaces (owner_id NULL).
  ALTER TABLE accounts ADD COLUMN owner_id TEXT REFERENCES accounts(id);
  CREATE INDEX accounts_by_owner ON accounts (owner_id, created_at) WHERE owner_id IS NOT NULL;
  `,
  `
  -- Standard Webhooks, as an option: whether an account's deliveries also carry webhook-id,
  -- webhook-timestamp and webhook-signature, and whether each logged attempt carried them.
  -- Every account and attempt before this version had the X-Service-* headers alone.
  ALTER TABLE accounts ADD COLUMN standard_webhooks INTEGER NOT NULL DEFAULT 0 CHECK (standard_webhooks IN (0, 1));
  ALTER TABLE webhook_attempts ADD COLUMN standard_webhooks INTEGER NOT NULL DEFAULT 0 CHECK (standard_webhooks IN (0, 1));
  `,
  `
  -- An attempt's number among its event's, kept with it: the log keeps an event's latest
  -- attempts only (MAX_KEPT_ATTEMPTS in domain/webhookLog.ts), so an attempt's place among
  -- those kept is no longer its number. The attempts logged before are numbered by their place.
  ALTER TABLE webhook_attempts ADD COLUMN number INTEGER NOT NULL DEFAULT 0;
  UPDATE webhook_attempts SET number = (SELECT COUNT(*) FROM webhook_attempts b WHERE b.event_id = webhook_attempts.event_id AND b.id <= webhook_attempts.id);
  `,
  `
  -- Ready videos of a store from before a job kept its file: their MP4 is made again and
  -- kept by a worker (domain/restoreFiles.ts), which then takes each off this list. Every
  -- ready video is listed, since whether its file is in the folder is not known here; one
  -- whose file is there is only looked at.
  CREATE TABLE files_to_restore (job_id TEXT PRIMARY KEY);
  INSERT INTO files_to_restore (job_id) SELECT id FROM jobs WHERE kind = 'avatar_video' AND status = 'ready';
  `,
];
