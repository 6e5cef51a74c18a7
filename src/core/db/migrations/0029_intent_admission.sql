-- 0029 intent admission in one statement committing alone (docs/intents.md, "Two round trips"):
-- the spend reservation as a booking guard that raises instead of answering, and the intent row
-- and its execution job as calls the fee's booking statement makes after the debit.

-- A reservation counts every hold committed before it took the wallet's lock, including holds
-- stamped later than its own `p_now`: a request that read the clock, then waited for the lock
-- while a later one reserved, must still see that one (0007 counted only holds up to `p_now`, so
-- concurrent admissions could pass a cap together). Otherwise as 0007.
CREATE OR REPLACE FUNCTION purser_reserve_spend(
  p_account text, p_wallet text, p_id text, p_amount bigint, p_now timestamptz, p_expires timestamptz
) RETURNS TABLE (
  outcome text, policy_version integer, limit_value bigint, used_value bigint
)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  v_policy record;
  v_existing record;
  v_per_tx bigint;
  v_daily bigint;
  v_velocity integer;
  v_day_start timestamptz;
  v_day_used bigint;
  v_hour_count integer;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended('purser.spend:' || p_account || ':' || p_wallet, 0));

  SELECT r.account_id, r.wallet, r.amount_micro_usd, r.policy_version INTO v_existing
    FROM spend_reservations r WHERE r.id = p_id;
  IF FOUND THEN
    IF v_existing.account_id = p_account AND v_existing.wallet = p_wallet
       AND v_existing.amount_micro_usd = p_amount THEN
      RETURN QUERY SELECT 'replayed'::text, v_existing.policy_version, NULL::bigint, NULL::bigint;
    ELSE
      RETURN QUERY SELECT 'conflict'::text, NULL::integer, NULL::bigint, NULL::bigint;
    END IF;
    RETURN;
  END IF;

  SELECT p.version, p.document INTO v_policy
    FROM policies p WHERE p.account_id = p_account AND p.wallet = p_wallet
    ORDER BY p.version DESC LIMIT 1;
  IF NOT FOUND THEN
    RETURN QUERY SELECT 'no_policy'::text, NULL::integer, NULL::bigint, NULL::bigint;
    RETURN;
  END IF;
  v_per_tx := purser_usd_micro(v_policy.document -> 'spend' ->> 'per_tx_usd');
  v_daily := purser_usd_micro(v_policy.document -> 'spend' ->> 'daily_usd');
  v_velocity := (v_policy.document -> 'spend' ->> 'velocity_per_hour')::integer;

  IF p_amount > v_per_tx THEN
    RETURN QUERY SELECT 'spend.per_tx_usd'::text, v_policy.version, v_per_tx, p_amount;
    RETURN;
  END IF;

  v_day_start := date_trunc('day', p_now AT TIME ZONE 'UTC') AT TIME ZONE 'UTC';
  SELECT
    COALESCE(SUM(CASE WHEN r.state = 'settled' THEN r.settled_micro_usd ELSE r.amount_micro_usd END)
      FILTER (WHERE r.created_at >= v_day_start), 0),
    COUNT(*) FILTER (WHERE r.created_at > p_now - interval '1 hour')
    INTO v_day_used, v_hour_count
    FROM spend_reservations r
    WHERE r.account_id = p_account AND r.wallet = p_wallet
      AND r.created_at >= LEAST(v_day_start, p_now - interval '1 hour')
      AND (r.state = 'settled' OR (r.state = 'pending' AND r.expires_at > p_now));

  IF v_day_used + p_amount > v_daily THEN
    RETURN QUERY SELECT 'spend.daily_usd'::text, v_policy.version, v_daily, v_day_used + p_amount;
    RETURN;
  END IF;
  IF v_hour_count + 1 > v_velocity THEN
    RETURN QUERY SELECT 'spend.velocity_per_hour'::text, v_policy.version, v_velocity::bigint,
      (v_hour_count + 1)::bigint;
    RETURN;
  END IF;

  INSERT INTO spend_reservations (id, account_id, wallet, amount_micro_usd, state, policy_version,
    created_at, expires_at)
  VALUES (p_id, p_account, p_wallet, p_amount, 'pending', v_policy.version, p_now, p_expires);
  RETURN QUERY SELECT 'ok'::text, v_policy.version, NULL::bigint, v_day_used + p_amount;
END;
$$;

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

-- What admission reads before it writes, in one call with its plans kept for the session: the
-- wallet's latest policy (as JSON), its open intents and, when asked, the unfinished jobs `p_job`.
-- The counts stop at their bounds (`p_wallet_bound`, `p_jobs_bound`): admission only asks whether
-- a bound is reached, so a backlog costs no more than the bound to count.
CREATE OR REPLACE FUNCTION purser_admission_context(
  p_account text, p_wallet text, p_job text, p_wallet_bound integer, p_jobs_bound integer
) RETURNS TABLE (policy json, open_intents bigint, open_jobs bigint)
LANGUAGE plpgsql STABLE AS $$
BEGIN
  RETURN QUERY SELECT
    (SELECT row_to_json(p) FROM (
       SELECT account_id, wallet, version, hash, document, defaulted, created_at FROM policies
        WHERE account_id = p_account AND wallet = p_wallet ORDER BY version DESC LIMIT 1) p),
    (SELECT count(*) FROM (SELECT 1 FROM intents
      WHERE account_id = p_account AND wallet = p_wallet AND status IN ('planned', 'executing')
      LIMIT p_wallet_bound) w),
    CASE WHEN p_jobs_bound > 0 THEN
      (SELECT count(*) FROM (SELECT 1 FROM jobs WHERE name = p_job AND state IN ('available', 'running')
        LIMIT p_jobs_bound) j)
    END;
END;
$$;
