-- 0002 jobs: the durable job queue (enqueued in the caller's transaction, claimed with SKIP LOCKED) and periodic schedules.

CREATE TABLE jobs (
  id text PRIMARY KEY,
  name text NOT NULL,                -- selects the handler
  payload jsonb NOT NULL,
  state text NOT NULL CHECK (state IN ('available', 'running', 'completed', 'failed')),
  attempts integer NOT NULL DEFAULT 0,       -- attempts started, counted at claim
  max_attempts integer NOT NULL CHECK (max_attempts >= 1),
  run_at timestamptz NOT NULL,       -- not claimed before this; pushed back by each retry
  locked_by text,                    -- worker id holding the lease while running
  locked_until timestamptz,          -- lease end: a running job past it belongs to nobody
  last_error text,
  singleton_key text,                -- at most one unfinished job per (name, key)
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  finished_at timestamptz
);

-- Workers scan these two sets on every poll; finished rows stay out of both indexes.
CREATE INDEX jobs_available_run_at ON jobs (run_at) WHERE state = 'available';
CREATE INDEX jobs_running_locked_until ON jobs (locked_until) WHERE state = 'running';
CREATE INDEX jobs_failed_finished_at ON jobs (finished_at DESC) WHERE state = 'failed';
-- enqueueJob's ON CONFLICT repeats this predicate word for word so PostgreSQL picks this index.
CREATE UNIQUE INDEX jobs_singleton ON jobs (name, singleton_key)
  WHERE singleton_key IS NOT NULL AND state IN ('available', 'running');

-- One row per periodic schedule. A worker tick locks due rows, enqueues their job and advances
-- next_run_at in one transaction, so however many workers run, each period fires once.
CREATE TABLE job_schedules (
  name text PRIMARY KEY,
  job_name text NOT NULL,
  payload jsonb NOT NULL,
  every_seconds integer NOT NULL CHECK (every_seconds > 0),
  next_run_at timestamptz NOT NULL,
  last_run_at timestamptz,
  updated_at timestamptz NOT NULL
);
