-- 0029 intent admission in one statement committing alone (docs/intents.md, "Two round trips"):
-- the spend reservation as a booking guard that raises instead of answering, and the intent row
-- and its execution job as calls the fee's booking statement makes after the debit.

-- Reserves as purser_reserve_spend does, after `p_claimed` (the Idempotency-Key's claim, or true:
-- evaluated first because it is an argument). Raises instead of answering a refusal, so a
-- statement whose reservation is refused writes nothing: PK422 with the cap as MESSAGE and
-- '<limit>/<would use>/<policy version>' as DETAIL, PK404 when the wallet has no policy, PK409 when the id is
-- taken. Unless `p_wait`, a wallet lock that another transaction holds fails at once (55P03): a
-- statement other bookings share must not stall.
CREATE OR REPLACE FUNCTION purser_reserve_spend_or_refuse(
  p_claimed boolean, p_account text, p_wallet text, p_id text, p_amount bigint, p_now timestamptz,
  p_expires timestamptz, p_wait boolean
) RETURNS boolean LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  v record;
BEGIN
  IF NOT p_claimed THEN
    RAISE EXCEPTION 'reservation % not attempted: its claim failed', p_id USING ERRCODE = 'P0001';
  END IF;
  IF NOT p_wait
     AND NOT pg_try_advisory_xact_lock(hashtextextended('purser.spend:' || p_account || ':' || p_wallet, 0)) THEN
    RAISE EXCEPTION 'spend lock of wallet % is held', p_wallet USING ERRCODE = '55P03';
  END IF;
  SELECT * INTO v FROM purser_reserve_spend(p_account, p_wallet, p_id, p_amount, p_now, p_expires);
  IF v.outcome IN ('ok', 'replayed') THEN
    RETURN true;
  ELSIF v.outcome = 'no_policy' THEN
    RAISE EXCEPTION 'no_policy' USING ERRCODE = 'PK404';
  ELSIF v.outcome = 'conflict' THEN
    RAISE EXCEPTION 'spend reservation % already exists', p_id USING ERRCODE = 'PK409';
  END IF;
  RAISE EXCEPTION '%', v.outcome USING ERRCODE = 'PK422', DETAIL = v.limit_value || '/' || v.used_value || '/' || v.policy_version;
END;
$$;

-- After a booking that did not happen (the prepaid balance did not cover the fee): the
-- reservation the guard took is released at once, so it holds nothing. `p_first` is whatever the
-- caller gives back first (the Idempotency-Key), evaluated before.
CREATE OR REPLACE FUNCTION purser_release_spend_reservation(p_first text, p_id text, p_now timestamptz)
RETURNS text LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  UPDATE spend_reservations SET state = 'released', closed_at = p_now WHERE id = p_id AND state = 'pending';
  RETURN p_id;
END;
$$;

CREATE OR REPLACE FUNCTION purser_insert_intent(
  p_id uuid, p_account text, p_wallet text, p_chain integer, p_kind text, p_status text,
  p_policy_version integer, p_policy_hash text, p_params jsonb, p_value bigint, p_reservation text,
  p_fee_group text, p_fee bigint, p_at timestamptz
) RETURNS text LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  INSERT INTO intents (id, account_id, wallet, chain_id, kind, status, policy_version, policy_hash,
    params, report, value_micro_usd, reservation_id, fee_group_id, fee_micro_usd, created_at, updated_at)
  VALUES (p_id, p_account, p_wallet, p_chain, p_kind, p_status, p_policy_version, p_policy_hash,
    p_params, '{}'::jsonb, p_value, p_reservation, p_fee_group, p_fee, p_at, p_at);
  RETURN p_id::text;
END;
$$;

-- enqueueJob as a call: a new job, or nothing when an unfinished job holds the singleton key.
CREATE OR REPLACE FUNCTION purser_enqueue_job(
  p_id text, p_name text, p_payload jsonb, p_max_attempts integer, p_singleton text, p_at timestamptz
) RETURNS text LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  INSERT INTO jobs (id, name, payload, state, max_attempts, run_at, singleton_key, created_at, updated_at)
  VALUES (p_id, p_name, p_payload, 'available', p_max_attempts, p_at, p_singleton, p_at, p_at)
  ON CONFLICT (name, singleton_key) WHERE singleton_key IS NOT NULL AND state IN ('available', 'running')
  DO NOTHING;
  RETURN p_id;
END;
$$;

-- The executor queue's per-wallet bound counts open intents: only those are indexed here.
CREATE INDEX intents_open_by_wallet ON intents (account_id, wallet) WHERE status IN ('planned', 'executing');
