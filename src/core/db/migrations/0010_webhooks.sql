-- Webhooks: one destination and one sealed HMAC secret per account, the delivery outbox and the
-- dead letters. A delivery row is written by a trigger on `events`, so it exists exactly when the
-- event (and the state change it reports) commits, and the NOTIFY that wakes the workers is sent
-- on that same commit.

CREATE TABLE webhook_endpoints (
  account_id text PRIMARY KEY,
  url text,                           -- null until PUT /v1/webhooks/endpoint
  secret_sealed text,                 -- AES-256-GCM, bound to the account id; null until first read
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);

-- The outbox: one row per (event, destination). Kept 14 days after it settles (housekeeping).
CREATE TABLE webhook_deliveries (
  id bigserial PRIMARY KEY,
  account_id text NOT NULL,
  event_id text NOT NULL UNIQUE,
  state text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'delivered', 'dead')),
  attempts integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz NOT NULL,
  locked_by text,
  locked_until timestamptz,
  last_status integer,
  last_error text,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  settled_at timestamptz
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE state = 'pending';

-- Deliveries whose retries ran out. Listed until the account is offboarded (bodies deleted then).
CREATE TABLE webhook_dead_letters (
  id bigserial PRIMARY KEY,
  account_id text NOT NULL,
  event_id text NOT NULL UNIQUE,
  kind text NOT NULL,
  body text,
  attempts integer NOT NULL,
  last_status integer,
  last_error text,
  first_attempt_at timestamptz NOT NULL,
  dead_at timestamptz NOT NULL
);
CREATE INDEX webhook_dead_letters_account ON webhook_dead_letters (account_id, id DESC);

CREATE FUNCTION purser_webhook_outbox() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO webhook_deliveries (account_id, event_id, next_attempt_at, created_at, updated_at)
  SELECT NEW.account_id, NEW.id, NEW.created_at, NEW.created_at, NEW.created_at
  FROM webhook_endpoints e
  WHERE e.account_id = NEW.account_id AND e.url IS NOT NULL;
  IF FOUND THEN
    PERFORM pg_notify('purser_webhooks', NEW.account_id);
  END IF;
  RETURN NULL;
END;
$$;

CREATE TRIGGER events_webhook_outbox AFTER INSERT ON events
  FOR EACH ROW EXECUTE FUNCTION purser_webhook_outbox();
