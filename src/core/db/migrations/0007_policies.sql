-- 0007 policies: versioned per-wallet policy documents and two-phase spend reservations.

-- Policy versions: immutable, hash-addressed, append-only. `document` is the stored document
-- (defaults filled in); `hash` is the SHA-256 of its RFC 8785 canonical JSON, computed in the
-- service. Versions rise by one per (account, wallet); the service takes a per-wallet lock
-- before it reads the latest version, and the unique key is the backstop.
CREATE TABLE policies (
  account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  wallet text NOT NULL,                      -- lowercase 0x address
  version integer NOT NULL CHECK (version >= 1),
  hash text NOT NULL,                        -- sha256:<hex>
  document jsonb NOT NULL,
  defaulted text[] NOT NULL,
  created_at timestamptz NOT NULL,
  PRIMARY KEY (account_id, wallet, version)
);
CREATE TRIGGER policies_append_only BEFORE UPDATE OR DELETE ON policies
  FOR EACH ROW EXECUTE FUNCTION purser_refuse_change();

-- Spend reservations: two-phase holds against the spend caps of the wallet's active policy.
-- pending → settled (fully or partly) | released | expired, each at most once.
CREATE TABLE spend_reservations (
  id text PRIMARY KEY,                       -- the caller's reservation identity
  account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  wallet text NOT NULL,
  amount_micro_usd bigint NOT NULL CHECK (amount_micro_usd > 0),
  settled_micro_usd bigint CHECK (settled_micro_usd >= 0 AND settled_micro_usd <= amount_micro_usd),
  state text NOT NULL CHECK (state IN ('pending', 'settled', 'released', 'expired')),
  policy_version integer NOT NULL,
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  closed_at timestamptz
);
-- Serves both the UTC-day sum and the rolling-hour count of one wallet.
CREATE INDEX spend_reservations_wallet_created ON spend_reservations (account_id, wallet, created_at);
CREATE INDEX spend_reservations_pending_expiry ON spend_reservations (expires_at) WHERE state = 'pending';

-- A reservation's identity, amount and creation never change, and it leaves `pending` once.
CREATE OR REPLACE FUNCTION purser_reservation_guard() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF current_setting('purser.retention', true) = 'on' THEN
    IF TG_OP = 'DELETE' THEN RETURN OLD; END IF;
    RETURN NEW;
  END IF;
  IF TG_OP = 'DELETE' THEN
    RAISE EXCEPTION 'spend_reservations rows are never deleted' USING ERRCODE = 'P0001';
  END IF;
  IF OLD.state <> 'pending' OR NEW.state = 'pending'
     OR NEW.id <> OLD.id OR NEW.account_id <> OLD.account_id OR NEW.wallet <> OLD.wallet
     OR NEW.amount_micro_usd <> OLD.amount_micro_usd OR NEW.created_at <> OLD.created_at
     OR NEW.expires_at <> OLD.expires_at OR NEW.policy_version <> OLD.policy_version THEN
    RAISE EXCEPTION 'spend reservation %: transition % -> % refused', OLD.id, OLD.state, NEW.state
      USING ERRCODE = 'P0001';
  END IF;
  RETURN NEW;
END;
$$;
CREATE TRIGGER spend_reservations_guard BEFORE UPDATE OR DELETE ON spend_reservations
  FOR EACH ROW EXECUTE FUNCTION purser_reservation_guard();

-- USD decimal string (at most 6 decimals, validated on write) to integer micro-USD.
CREATE OR REPLACE FUNCTION purser_usd_micro(v text) RETURNS bigint
LANGUAGE sql IMMUTABLE AS $$ SELECT (v::numeric * 1000000)::bigint $$;

-- Reserves `p_amount` micro-USD for (account, wallet) against the caps of the wallet's latest
-- policy, in one round trip. The per-wallet advisory lock serializes reservations of one wallet
-- across every process; each statement below runs after the lock is held and (at READ
-- COMMITTED, in a VOLATILE function) takes a fresh snapshot, so it sees every reservation
-- committed before the lock was granted. Caps count pending (not yet expired by the clock) plus
-- settled amounts; released and expired holds count for nothing.
--
-- outcome: 'ok', 'replayed' (the same id with the same amount already exists), 'conflict'
-- (the id exists with another account, wallet or amount), 'no_policy', or the refusing rule:
-- 'spend.per_tx_usd', 'spend.daily_usd', 'spend.velocity_per_hour'.
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
      AND r.created_at >= LEAST(v_day_start, p_now - interval '1 hour') AND r.created_at <= p_now
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
