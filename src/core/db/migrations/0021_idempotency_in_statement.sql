-- 0021 an Idempotency-Key claimed, answered and released inside the write's own statement, for
-- writes that commit alone (the ledger's batched bookings: docs/decisions.md, "Idempotency-Key
-- claim in one statement"). The transactional path uses the same store and release.

-- Claims the key as purser_claim_idempotency_key does, or raises PK409 when another request holds
-- it: a statement that claims a key it cannot have writes nothing at all.
CREATE OR REPLACE FUNCTION purser_claim_idempotency_key_or_refuse(
  p_scope text, p_method text, p_path text, p_key text, p_fingerprint text,
  p_now timestamptz, p_expires timestamptz, p_wait text
) RETURNS boolean LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  IF NOT purser_claim_idempotency_key(p_scope, p_method, p_path, p_key, p_fingerprint, p_now, p_expires, p_wait) THEN
    RAISE EXCEPTION 'Idempotency-Key % of % is held by another request', p_key, p_scope
      USING ERRCODE = 'PK409';
  END IF;
  RETURN true;
END;
$$;

-- The answer to replay under a claimed key.
CREATE OR REPLACE FUNCTION purser_store_idempotency_response(
  p_scope text, p_method text, p_path text, p_key text, p_status integer, p_body text
) RETURNS text LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  UPDATE idempotency_keys
     SET response_status = p_status, response_body = p_body, response_type = 'application/json'
   WHERE scope = p_scope AND method = p_method AND path = p_path AND key = p_key;
  RETURN p_key;
END;
$$;

-- Gives a claimed key back when its answer is not stored (402, 202, a refused write).
CREATE OR REPLACE FUNCTION purser_release_idempotency_key(
  p_scope text, p_method text, p_path text, p_key text
) RETURNS text LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  DELETE FROM idempotency_keys WHERE scope = p_scope AND method = p_method AND path = p_path AND key = p_key;
  RETURN p_key;
END;
$$;
