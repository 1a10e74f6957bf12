// Versioned migrations of the PostgreSQL store, applied in order inside one
// transaction each, under an advisory lock so that several processes starting
// together never run one twice. Times are epoch milliseconds (BIGINT), as in the domain.
export const MIGRATIONS: readonly { version: number; name: string; sql: string }[] = [
  {
    version: 1,
    name: 'initial schema',
    sql: `
    CREATE TABLE accounts (
      id TEXT PRIMARY KEY,
      name TEXT NOT NULL,
      monthly_credits INTEGER NOT NULL CHECK (monthly_credits >= 0),
      plan JSONB NOT NULL,
      signing_secret TEXT NOT NULL,
      created_at BIGINT NOT NULL
    );
    CREATE TABLE api_keys (
      id TEXT PRIMARY KEY,
      account_id TEXT NOT NULL REFERENCES accounts(id),
      mode TEXT NOT NULL CHECK (mode IN ('sandbox', 'live')),
      prefix TEXT NOT NULL,
      hash TEXT NOT NULL UNIQUE,
      created_at BIGINT NOT NULL,
      revoked_at BIGINT
    );
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
      sandbox BOOLEAN NOT NULL,
      status TEXT NOT NULL CHECK (status IN ('queued', 'processing', 'ready', 'failed')),
      input JSONB NOT NULL,
      webhook_url TEXT,
      credits INTEGER NOT NULL,
      period TEXT NOT NULL,
      error JSONB,
      result JSONB,
      created_at BIGINT NOT NULL,
      updated_at BIGINT NOT NULL,
      completed_at BIGINT,
      attempts INTEGER NOT NULL DEFAULT 0,
      lease_owner TEXT,
      lease_until BIGINT
    );
    CREATE INDEX jobs_runnable ON jobs (created_at) WHERE status IN ('queued', 'processing');
    CREATE TABLE webhook_events (
      id TEXT PRIMARY KEY,
      type TEXT NOT NULL,
      job_id TEXT NOT NULL REFERENCES jobs(id),
      account_id TEXT NOT NULL,
      url TEXT NOT NULL,
      payload TEXT NOT NULL,
      status TEXT NOT NULL CHECK (status IN ('pending', 'delivered', 'failed')),
      attempts INTEGER NOT NULL DEFAULT 0,
      next_attempt_at BIGINT NOT NULL,
      lease_until BIGINT,
      last_error TEXT,
      created_at BIGINT NOT NULL,
      delivered_at BIGINT
    );
    CREATE INDEX webhook_events_due ON webhook_events (next_attempt_at) WHERE status = 'pending';
    `,
  },
  {
    version: 2,
    name: 'sandbox clock',
    sql: `ALTER TABLE accounts ADD COLUMN clock_offset_ms BIGINT NOT NULL DEFAULT 0 CHECK (clock_offset_ms >= 0);`,
  },
  {
    version: 3,
    name: 'fair webhook delivery',
    // Events stored before this version are grouped by their whole URL.
    sql: `
    ALTER TABLE webhook_events ADD COLUMN destination TEXT NOT NULL DEFAULT '';
    UPDATE webhook_events SET destination = url WHERE destination = '';
    CREATE INDEX webhook_events_leased ON webhook_events (lease_until) WHERE status = 'pending' AND lease_until IS NOT NULL;
    CREATE INDEX webhook_events_destination ON webhook_events (destination, next_attempt_at) WHERE status = 'pending';
    CREATE TABLE webhook_destinations (
      destination TEXT PRIMARY KEY,
      failures INTEGER NOT NULL CHECK (failures > 0)
    );
    `,
  },
  {
    version: 4,
    name: 'idempotency keys',
    // One row per key that created a job, written in that job's transaction. The
    // primary key is what makes a concurrent retry wait for the first and then see it.
    sql: `
    CREATE TABLE idempotency_keys (
      account_id TEXT NOT NULL REFERENCES accounts(id),
      key TEXT NOT NULL,
      fingerprint TEXT NOT NULL,
      -- Checked at commit: the key is claimed before the job is written (see jobs.ts).
      job_id TEXT NOT NULL REFERENCES jobs(id) DEFERRABLE INITIALLY DEFERRED,
      response TEXT NOT NULL,
      created_at BIGINT NOT NULL,
      expires_at BIGINT NOT NULL,
      PRIMARY KEY (account_id, key)
    );
    CREATE INDEX idempotency_keys_expiry ON idempotency_keys (expires_at);
    `,
  },
  {
    version: 5,
    name: 'lists',
    sql: `CREATE INDEX jobs_by_account ON jobs (account_id, kind, created_at DESC, id DESC);`,
  },
  {
    version: 6,
    name: 'webhook delivery log',
    sql: `
    CREATE TABLE webhook_attempts (
      id BIGSERIAL PRIMARY KEY,
      event_id TEXT NOT NULL REFERENCES webhook_events(id),
      trigger TEXT NOT NULL CHECK (trigger IN ('scheduled', 'replay')),
      started_at BIGINT NOT NULL,
      duration_ms INTEGER NOT NULL CHECK (duration_ms >= 0),
      status_code INTEGER,
      error TEXT
    );
    CREATE INDEX webhook_attempts_by_event ON webhook_attempts (event_id, id);
    CREATE INDEX webhook_events_by_account ON webhook_events (account_id, created_at DESC, id DESC);
    ALTER TABLE webhook_events ADD COLUMN replay BOOLEAN NOT NULL DEFAULT false;
    `,
  },
  {
    version: 7,
    name: 'queue on the service time',
    // created_at is the account's time, and accounts' clocks differ: the queue orders by
    // the service's time of queueing instead. Jobs stored before this version get the one
    // their account's offset gives now (exact unless the clock moved since they were made).
    sql: `
    ALTER TABLE jobs ADD COLUMN queued_at BIGINT NOT NULL DEFAULT 0;
    UPDATE jobs j SET queued_at = j.created_at - a.clock_offset_ms FROM accounts a WHERE a.id = j.account_id;
    DROP INDEX jobs_runnable;
    CREATE INDEX jobs_runnable ON jobs (queued_at) WHERE status IN ('queued', 'processing');
    `,
  },
  {
    version: 8,
    name: 'account time cap',
    // The cap on an account's time (ND-SANDBOX-CLOCK: 100 years, 3,155,760,000 s, as it
    // stood when this ran): a clock moved past it before the cap existed comes back to it,
    // the one way back for an account whose times had left RFC 3339 or JavaScript's dates.
    sql: `UPDATE accounts SET clock_offset_ms = 3155760000000 WHERE clock_offset_ms > 3155760000000;`,
  },
  {
    version: 9,
    name: 'workspaces',
    // An account with an owner is a workspace of that owner account, with its own keys,
    // credits and limits. Every account stored before this version is an owner with no
    // workspaces (owner_id NULL).
    sql: `
    ALTER TABLE accounts ADD COLUMN owner_id TEXT REFERENCES accounts(id);
    CREATE INDEX accounts_by_owner ON accounts (owner_id, created_at) WHERE owner_id IS NOT NULL;
    `,
  },
  {
    version: 10,
    name: 'standard webhooks opt-in',
    // Whether an account's deliveries also carry the Standard Webhooks headers, and whether
    // each logged attempt carried them; everything before had the X-Service-* headers alone.
    sql: `
    ALTER TABLE accounts ADD COLUMN standard_webhooks BOOLEAN NOT NULL DEFAULT false;
    ALTER TABLE webhook_attempts ADD COLUMN standard_webhooks BOOLEAN NOT NULL DEFAULT false;
    `,
  },
  {
    version: 11,
    name: 'files made by jobs',
    // A video's MP4, made by the worker that ran its job and served by any API process.
    // Its pieces are stored uncompressed (EXTERNAL): an MP4 does not compress, and a
    // ranged read then fetches only the slices it needs.
    sql: `
    CREATE TABLE job_files (
      job_id TEXT NOT NULL REFERENCES jobs(id),
      name TEXT NOT NULL,
      content_type TEXT NOT NULL,
      size BIGINT NOT NULL CHECK (size >= 0),
      created_at BIGINT NOT NULL,
      PRIMARY KEY (job_id, name)
    );
    CREATE TABLE job_file_chunks (
      job_id TEXT NOT NULL REFERENCES jobs(id),
      name TEXT NOT NULL,
      seq INTEGER NOT NULL CHECK (seq >= 0),
      data BYTEA NOT NULL,
      PRIMARY KEY (job_id, name, seq)
    );
    ALTER TABLE job_file_chunks ALTER COLUMN data SET STORAGE EXTERNAL;
    `,
  },
  {
    version: 12,
    name: 'grouped creates',
    // The creates without an idempotency key that arrive together, in one statement and
    // one commit (storage/postgres-redis/createGroup.ts). Each is decided on its own, in
    // turn, exactly as a create alone: the period's ledger row is reserved from only while
    // the balance covers the job (ON CONFLICT DO UPDATE locks the row and judges its WHERE
    // on the row's latest version; a period's first reservation inserts the row, the plan's
    // credits alone covering it), and the job is written only if that reserved. A refused
    // create answers the balance it was refused on and writes nothing; the others go on.
    // The rows are taken by account and period, so every group locks ledger rows in one
    // order and two groups never deadlock. Each statement of a PL/pgSQL function takes a
    // new snapshot, so a ledger row another transaction just committed is seen.
    sql: `
    CREATE FUNCTION create_jobs_reserving(p_jobs jsonb)
    RETURNS TABLE (n bigint, accepted boolean, quota bigint, reserved bigint, used bigint)
    LANGUAGE plpgsql AS $fn$
    #variable_conflict use_column
    DECLARE
      j record;
    BEGIN
      FOR j IN
        SELECT * FROM ROWS FROM (jsonb_to_recordset(p_jobs) AS (
          id text, kind text, account_id text, key_id text, sandbox boolean, status text, input jsonb, webhook_url text,
          credits integer, period text, created_at bigint, updated_at bigint, queued_at bigint
        )) WITH ORDINALITY AS x(id, kind, account_id, key_id, sandbox, status, input, webhook_url, credits, period, created_at, updated_at, queued_at, n)
        ORDER BY x.account_id, x.period, x.n
      LOOP
        INSERT INTO credit_ledger AS l (account_id, period, reserved)
        SELECT a.id, j.period, j.credits FROM accounts a
        WHERE a.id = j.account_id
          AND (a.monthly_credits >= j.credits OR EXISTS (SELECT 1 FROM credit_ledger c WHERE c.account_id = j.account_id AND c.period = j.period))
        ON CONFLICT (account_id, period) DO UPDATE SET reserved = l.reserved + excluded.reserved
        WHERE (SELECT a.monthly_credits FROM accounts a WHERE a.id = l.account_id) + l.granted - l.reserved - l.used >= excluded.reserved;
        n := j.n;
        IF FOUND THEN
          INSERT INTO jobs (id, kind, account_id, key_id, sandbox, status, input, webhook_url, credits, period, created_at, updated_at, attempts, queued_at)
          VALUES (j.id, j.kind, j.account_id, j.key_id, j.sandbox, j.status, j.input, j.webhook_url, j.credits, j.period, j.created_at, j.updated_at, 0, j.queued_at);
          accepted := true;
          quota := NULL;
          reserved := NULL;
          used := NULL;
        ELSE
          accepted := false;
          SELECT COALESCE(MAX(a.monthly_credits + COALESCE(l.granted, 0)), 0), COALESCE(MAX(l.reserved), 0), COALESCE(MAX(l.used), 0)
          INTO quota, reserved, used
          FROM accounts a LEFT JOIN credit_ledger l ON l.account_id = a.id AND l.period = j.period
          WHERE a.id = j.account_id;
        END IF;
        RETURN NEXT;
      END LOOP;
    END
    $fn$;
    `,
  },
  {
    version: 13,
    name: 'grouped completions',
    // The completions that arrive together, in one statement and one commit
    // (storage/postgres-redis/completeGroup.ts). Each moves its job as a completion alone
    // does: only a job not yet terminal changes (ST-TERMINAL), its credits captured on
    // ready or released on failed, its event recorded; a job already terminal changes
    // nothing and answers false. Every job row is locked first, in the order of their
    // IDs, then the ledger rows, by account and period as the grouped creates lock them,
    // so that no two groups, and no group and a create, ever wait on each other in a circle.
    sql: `
    CREATE FUNCTION complete_jobs(p_completions jsonb)
    RETURNS TABLE (n bigint, moved boolean)
    LANGUAGE plpgsql AS $fn$
    #variable_conflict use_column
    DECLARE
      c record;
      m record;
      moved_accounts text[] := '{}';
      moved_periods text[] := '{}';
      moved_credits integer[] := '{}';
      moved_ready boolean[] := '{}';
      done_account text;
      done_credits integer;
      done_period text;
    BEGIN
      FOR c IN
        SELECT * FROM ROWS FROM (jsonb_to_recordset(p_completions) AS (
          job_id text, status text, error jsonb, result jsonb, at bigint, event jsonb
        )) WITH ORDINALITY AS x(job_id, status, error, result, at, event, n)
        ORDER BY x.job_id, x.n
      LOOP
        UPDATE jobs SET status = c.status, error = c.error, result = c.result, updated_at = c.at, completed_at = c.at, lease_owner = NULL, lease_until = NULL
        WHERE id = c.job_id AND status NOT IN ('ready', 'failed')
        RETURNING account_id, credits, period INTO done_account, done_credits, done_period;
        n := c.n;
        moved := FOUND;
        IF moved THEN
          moved_accounts := moved_accounts || done_account;
          moved_periods := moved_periods || done_period;
          moved_credits := moved_credits || done_credits;
          moved_ready := moved_ready || (c.status = 'ready');
          IF c.event IS NOT NULL THEN
            INSERT INTO webhook_events (id, type, job_id, account_id, url, destination, payload, status, attempts, next_attempt_at, last_error, created_at, delivered_at)
            SELECT e.id, e.type, e.job_id, e.account_id, e.url, e.destination, e.payload, e.status, e.attempts, e.next_attempt_at, e.last_error, e.created_at, e.delivered_at
            FROM jsonb_to_record(c.event) AS e(id text, type text, job_id text, account_id text, url text, destination text, payload text, status text,
              attempts integer, next_attempt_at bigint, last_error text, created_at bigint, delivered_at bigint)
            ON CONFLICT (id) DO NOTHING;
          END IF;
        END IF;
        RETURN NEXT;
      END LOOP;
      FOR m IN
        SELECT u.account_id, u.period, SUM(u.credits)::integer AS released, SUM(CASE WHEN u.ready THEN u.credits ELSE 0 END)::integer AS captured
        FROM unnest(moved_accounts, moved_periods, moved_credits, moved_ready) AS u(account_id, period, credits, ready)
        GROUP BY u.account_id, u.period
        ORDER BY u.account_id, u.period
      LOOP
        UPDATE credit_ledger l SET reserved = l.reserved - m.released, used = l.used + m.captured
        WHERE l.account_id = m.account_id AND l.period = m.period;
      END LOOP;
    END
    $fn$;
    `,
  },
  {
    version: 14,
    name: 'queues read in their index order',
    // What the claims of a queue read, always through the queue's index, one entry after
    // another: the rows a job claim takes and the head of the webhook queue a delivery
    // claim weighs (the first runnable or due ones, in the index's order), and the webhook
    // attempts in flight. Left to its statistics, PostgreSQL may instead read every
    // runnable job or due event and sort them, cheap on a short queue only (rows locked
    // FOR UPDATE are even sorted in full, never only up to the LIMIT), or gather the index's
    // entries into a bitmap, which visits every row an entry points to every time, the
    // thousands of leases of events delivered since as well; read one entry at a time, an
    // entry whose row is gone for good is marked so and passed over after. With
    // statistics taken while a queue was short (or none yet), a burst of 60,000 jobs
    // drained at a twentieth of the runner's speed, and each webhook claim read every
    // pending event and every lease of the drain so far. A queue swings from empty to
    // thousands faster than statistics follow, so the plan is pinned here rather than
    // left to them. A few rows come back (ROWS), so that what joins them finds each by its key.
    sql: `
    CREATE FUNCTION runnable_jobs(p_now bigint, p_skip_videos_of text[], p_limit integer)
    RETURNS TABLE (id text, kind text, account_id text, queued_at bigint)
    LANGUAGE sql VOLATILE ROWS 8
    SET enable_sort = off SET enable_bitmapscan = off
    AS $fn$
      SELECT j.id, j.kind, j.account_id, j.queued_at FROM jobs j
      WHERE j.status IN ('queued', 'processing') AND (j.status = 'queued' OR j.lease_until < p_now)
        AND NOT (j.kind = 'avatar_video' AND j.account_id = ANY(p_skip_videos_of))
      ORDER BY j.queued_at LIMIT p_limit
      FOR UPDATE SKIP LOCKED
    $fn$;
    CREATE FUNCTION due_webhook_events(p_now bigint, p_limit integer)
    RETURNS TABLE (id text, destination text, next_attempt_at bigint)
    LANGUAGE sql STABLE ROWS 100
    SET enable_sort = off SET enable_bitmapscan = off
    AS $fn$
      SELECT e.id, e.destination, e.next_attempt_at FROM webhook_events e
      WHERE e.status = 'pending' AND e.next_attempt_at <= p_now AND (e.lease_until IS NULL OR e.lease_until < p_now)
      ORDER BY e.next_attempt_at LIMIT p_limit
    $fn$;
    CREATE FUNCTION webhook_attempts_in_flight(p_now bigint)
    RETURNS TABLE (destination text, n bigint)
    LANGUAGE sql STABLE ROWS 10
    SET enable_bitmapscan = off SET enable_seqscan = off
    AS $fn$
      SELECT e.destination, COUNT(*) FROM webhook_events e
      WHERE e.status = 'pending' AND e.lease_until >= p_now
      GROUP BY e.destination
    $fn$;
    `,
  },
  {
    version: 15,
    name: 'credits summed in bigint',
    // An account's monthly credits and a month's grants are each an INTEGER, and their sum
    // was one too: a store that holds more than 2^31 - 1 of them together (written before
    // the operator command bounded a month's credits, MAX_CREDITS in domain/credits.ts)
    // failed every create of that account. Summed in bigint, the sum is read (within the
    // bound, rows.ts) instead. Only the two sums change; the columns keep their type, so
    // the statements servers have prepared keep their result types.
    sql: `
    CREATE OR REPLACE FUNCTION create_jobs_reserving(p_jobs jsonb)
    RETURNS TABLE (n bigint, accepted boolean, quota bigint, reserved bigint, used bigint)
    LANGUAGE plpgsql AS $fn$
    #variable_conflict use_column
    DECLARE
      j record;
    BEGIN
      FOR j IN
        SELECT * FROM ROWS FROM (jsonb_to_recordset(p_jobs) AS (
          id text, kind text, account_id text, key_id text, sandbox boolean, status text, input jsonb, webhook_url text,
          credits integer, period text, created_at bigint, updated_at bigint, queued_at bigint
        )) WITH ORDINALITY AS x(id, kind, account_id, key_id, sandbox, status, input, webhook_url, credits, period, created_at, updated_at, queued_at, n)
        ORDER BY x.account_id, x.period, x.n
      LOOP
        INSERT INTO credit_ledger AS l (account_id, period, reserved)
        SELECT a.id, j.period, j.credits FROM accounts a
        WHERE a.id = j.account_id
          AND (a.monthly_credits >= j.credits OR EXISTS (SELECT 1 FROM credit_ledger c WHERE c.account_id = j.account_id AND c.period = j.period))
        ON CONFLICT (account_id, period) DO UPDATE SET reserved = l.reserved + excluded.reserved
        WHERE (SELECT a.monthly_credits::bigint FROM accounts a WHERE a.id = l.account_id) + l.granted - l.reserved - l.used >= excluded.reserved;
        n := j.n;
        IF FOUND THEN
          INSERT INTO jobs (id, kind, account_id, key_id, sandbox, status, input, webhook_url, credits, period, created_at, updated_at, attempts, queued_at)
          VALUES (j.id, j.kind, j.account_id, j.key_id, j.sandbox, j.status, j.input, j.webhook_url, j.credits, j.period, j.created_at, j.updated_at, 0, j.queued_at);
          accepted := true;
          quota := NULL;
          reserved := NULL;
          used := NULL;
        ELSE
          accepted := false;
          SELECT COALESCE(MAX(a.monthly_credits::bigint + COALESCE(l.granted, 0)), 0), COALESCE(MAX(l.reserved), 0), COALESCE(MAX(l.used), 0)
          INTO quota, reserved, used
          FROM accounts a LEFT JOIN credit_ledger l ON l.account_id = a.id AND l.period = j.period
          WHERE a.id = j.account_id;
        END IF;
        RETURN NEXT;
      END LOOP;
    END
    $fn$;
    `,
  },
  {
    version: 16,
    name: 'attempts numbered',
    // An attempt's number among its event's, kept with it: the log keeps an event's latest
    // attempts only (MAX_KEPT_ATTEMPTS in domain/webhookLog.ts), so an attempt's place among
    // those kept is no longer its number. The attempts logged before are numbered by their place.
    sql: `
    ALTER TABLE webhook_attempts ADD COLUMN number integer NOT NULL DEFAULT 0;
    UPDATE webhook_attempts w SET number = p.n
    FROM (SELECT id, row_number() OVER (PARTITION BY event_id ORDER BY id) AS n FROM webhook_attempts) p
    WHERE w.id = p.id;
    `,
  },
  {
    version: 17,
    name: 'service keys',
    // Keys of the service itself, the same for every process: the one that signs file
    // links (ND-FILE-LINKS), written by the first process that needs it when the operator
    // sets no FILE_LINK_KEY.
    sql: `CREATE TABLE service_keys (name TEXT PRIMARY KEY, value TEXT NOT NULL);`,
  },
  {
    version: 18,
    name: 'files to restore',
    // Ready videos of a store from before a job kept its file (no job_files row): their MP4
    // is made again and kept by a worker (domain/restoreFiles.ts), which then takes each
    // off this list.
    sql: `
    CREATE TABLE files_to_restore (job_id TEXT PRIMARY KEY);
    INSERT INTO files_to_restore (job_id)
    SELECT j.id FROM jobs j
    WHERE j.kind = 'avatar_video' AND j.status = 'ready' AND NOT EXISTS (SELECT 1 FROM job_files f WHERE f.job_id = j.id AND f.name = 'video.mp4');
    `,
  },
  {
    version: 19,
    name: 'attempts in flight from the leases alone',
    // A SQL function's statement is planned without p_now's value: the count took the due
    // events' index and read every pending entry of it, after a drain the entry of every
    // event delivered since the last vacuum, each a visit to the table whenever a session's
    // snapshot kept PostgreSQL from marking them dead. Planned with the value (EXECUTE),
    // the leases' index is the cheaper way, and its range skips expired leases.
    sql: `
    CREATE OR REPLACE FUNCTION webhook_attempts_in_flight(p_now bigint)
    RETURNS TABLE (destination text, n bigint)
    LANGUAGE plpgsql STABLE ROWS 10
    SET enable_bitmapscan = off SET enable_seqscan = off
    AS $fn$
    BEGIN
      RETURN QUERY EXECUTE
        'SELECT e.destination, COUNT(*) FROM webhook_events e
         WHERE e.status = ''pending'' AND e.lease_until >= $1
         GROUP BY e.destination'
      USING p_now;
    END
    $fn$;
    `,
  },
];
