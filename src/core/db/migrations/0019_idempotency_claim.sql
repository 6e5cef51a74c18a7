-- 0019 the Idempotency-Key claim in one round trip (docs/decisions.md, "Idempotency-Key claim in
-- one statement"). Before, a keyed mutation set a short lock_timeout, claimed the key and reset
-- the timeout in three statements; this function does the same in one call. The rows written and
-- the answers are unchanged.
--
-- Claims (scope, method, path, key) for a new request: inserts the claim row, or takes over a row
-- whose 7 days are over. Returns false when an unexpired row holds the key (a stored response,
-- or a claim a concurrent request committed). While the key's row is locked by a request still in
-- flight, this waits at most `p_wait` (lock_timeout), then fails with 55P03; the caller answers
-- 409. The transaction's own lock_timeout is put back before returning, so the domain write that
-- follows keeps its usual lock waits.
CREATE OR REPLACE FUNCTION purser_claim_idempotency_key(
  p_scope text, p_method text, p_path text, p_key text, p_fingerprint text,
  p_now timestamptz, p_expires timestamptz, p_wait text
) RETURNS boolean LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  v_timeout text := current_setting('lock_timeout');
  v_claimed boolean;
BEGIN
  PERFORM set_config('lock_timeout', p_wait, true);
  INSERT INTO idempotency_keys AS k
    (scope, method, path, key, fingerprint, response_status, response_body, response_type, created_at, expires_at)
  VALUES (p_scope, p_method, p_path, p_key, p_fingerprint, 0, '', '', p_now, p_expires)
  ON CONFLICT (scope, method, path, key) DO UPDATE
    SET fingerprint = EXCLUDED.fingerprint, response_status = 0, response_body = '', response_type = '',
        created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at
    WHERE k.expires_at <= p_now
  RETURNING true INTO v_claimed;
  PERFORM set_config('lock_timeout', v_timeout, true);
  RETURN coalesce(v_claimed, false);
END;
$$;
