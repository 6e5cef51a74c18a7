-- 0001 core: append-only guard, idempotency keys, the event store and the audit log.

-- Append-only tables call this from BEFORE UPDATE/DELETE triggers. The one way through is a
-- transaction that has run SET LOCAL purser.retention = 'on' (the housekeeping sweep only).
CREATE OR REPLACE FUNCTION purser_refuse_change() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF current_setting('purser.retention', true) = 'on' THEN
    IF TG_OP = 'DELETE' THEN RETURN OLD; END IF;
    RETURN NEW;
  END IF;
  RAISE EXCEPTION 'table % is append-only: % refused', TG_TABLE_NAME, TG_OP
    USING ERRCODE = 'P0001';
END;
$$;

-- Idempotency-Key claims and stored responses. The claim is written in the same transaction as
-- the domain write, so a concurrent duplicate waits on the unique key and then replays.
CREATE TABLE idempotency_keys (
  scope text NOT NULL,              -- the credential's account id, or ip:<addr> on public routes
  method text NOT NULL,
  path text NOT NULL,
  key text NOT NULL,
  fingerprint text NOT NULL,        -- sha256 of method, path and canonical body
  response_status integer NOT NULL,
  response_body text NOT NULL,      -- the bytes as sent (jsonb would reorder keys)
  response_type text NOT NULL,
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  PRIMARY KEY (scope, method, path, key)
);
CREATE INDEX idempotency_keys_expires_at ON idempotency_keys (expires_at);

-- Events: everything that happened to an account, permanent. Webhook delivery reads from here.
CREATE TABLE events (
  seq bigserial PRIMARY KEY,
  id text NOT NULL UNIQUE,
  account_id text NOT NULL,
  kind text NOT NULL,
  subject text,
  payload jsonb NOT NULL,
  created_at timestamptz NOT NULL
);
CREATE INDEX events_account_seq ON events (account_id, seq DESC);
CREATE TRIGGER events_append_only BEFORE UPDATE OR DELETE ON events
  FOR EACH ROW EXECUTE FUNCTION purser_refuse_change();

-- Audit facts: who did what, permanent. Network context lives beside it so it can be deleted
-- after 90 days without touching the fact itself.
CREATE TABLE audit_log (
  seq bigserial PRIMARY KEY,
  id text NOT NULL UNIQUE,
  account_id text,                  -- null for platform and operator actions
  actor text NOT NULL,              -- session:<id>, key:<id>, operator, system
  action text NOT NULL,
  subject text,
  details jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at timestamptz NOT NULL
);
CREATE INDEX audit_log_account_seq ON audit_log (account_id, seq DESC);
CREATE TRIGGER audit_log_append_only BEFORE UPDATE OR DELETE ON audit_log
  FOR EACH ROW EXECUTE FUNCTION purser_refuse_change();

CREATE TABLE network_context (
  audit_id text PRIMARY KEY REFERENCES audit_log (id) ON DELETE CASCADE,
  account_id text,
  client_ip text,
  user_agent text,                  -- cut to 200 characters
  created_at timestamptz NOT NULL
);
CREATE INDEX network_context_created_at ON network_context (created_at);
