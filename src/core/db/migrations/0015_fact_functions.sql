-- 0015 fact functions: the inserts of events, audit facts and feature requests as SQL functions,
-- so a metered write can book its fee and record what it did in ONE statement (the ledger
-- composes them after its booking: src/modules/ledger/ledger.ts, postGroup's `then`). Each
-- function belongs to the module that owns its table; the TypeScript inserts stay as they are.

CREATE OR REPLACE FUNCTION purser_emit_event(
  p_id text, p_account text, p_kind text, p_subject text, p_payload jsonb, p_at timestamptz
) RETURNS text LANGUAGE sql VOLATILE AS $$
  INSERT INTO events (id, account_id, kind, subject, payload, created_at)
  VALUES (p_id, p_account, p_kind, p_subject, p_payload, p_at)
  RETURNING id;
$$;

CREATE OR REPLACE FUNCTION purser_record_audit(
  p_id text, p_account text, p_actor text, p_action text, p_subject text, p_details jsonb,
  p_at timestamptz, p_with_network boolean, p_client_ip text, p_user_agent text
) RETURNS text LANGUAGE sql VOLATILE AS $$
  WITH fact AS (
    INSERT INTO audit_log (id, account_id, actor, action, subject, details, created_at)
    VALUES (p_id, p_account, p_actor, p_action, p_subject, p_details, p_at)
    RETURNING id
  ), network AS (
    INSERT INTO network_context (audit_id, account_id, client_ip, user_agent, created_at)
    SELECT fact.id, p_account, p_client_ip, left(p_user_agent, 200), p_at FROM fact WHERE p_with_network
  )
  SELECT id FROM fact;
$$;

CREATE OR REPLACE FUNCTION purser_insert_feature_request(
  p_id text, p_account text, p_title text, p_body text, p_status text, p_at timestamptz
) RETURNS text LANGUAGE sql VOLATILE AS $$
  INSERT INTO feature_requests (id, account_id, title, body, status, created_at, updated_at)
  VALUES (p_id, p_account, p_title, p_body, p_status, p_at, p_at)
  RETURNING id;
$$;
