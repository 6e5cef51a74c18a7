-- 0041 spend windows: what a wallet's spend caps count, kept up to date as reservations change,
-- so a reservation no longer sums the wallet's reservations of the day (a cost that grew with
-- every admission of the day). docs/policies.md, "How the caps are counted".
--
-- One row per (account, wallet):
--   `day`, `day_used_micro_usd`: what spend.daily_usd counts for that UTC day, over the
--     reservations created on it: a pending one its amount, a settled one what it settled,
--     released and expired ones nothing;
--   `hour_from`, `hour_count`: how many reservations created after `hour_from` are pending or
--     settled (spend.velocity_per_hour).
-- A row trigger on spend_reservations moves both with every insert, transition and (retention)
-- delete, in the statement that makes the change; purser_reserve_spend moves the window forward,
-- under the wallet's lock and the window row's lock. A pending reservation past its expiry still
-- counts here until the sweep marks it `expired`; the reservation subtracts those itself.
CREATE TABLE spend_windows (
  account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  wallet text NOT NULL,
  day date NOT NULL,
  day_used_micro_usd bigint NOT NULL,
  hour_from timestamptz NOT NULL,
  hour_count integer NOT NULL,
  PRIMARY KEY (account_id, wallet)
);

-- A wallet's pending reservations by expiry: the ones past it that the sweep has not marked yet.
CREATE INDEX spend_reservations_wallet_pending ON spend_reservations (account_id, wallet, expires_at)
  WHERE state = 'pending';

-- What one reservation counts against spend.daily_usd in its state.
CREATE OR REPLACE FUNCTION purser_spend_counted(p_state text, p_amount bigint, p_settled bigint)
RETURNS bigint LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE p_state WHEN 'pending' THEN p_amount WHEN 'settled' THEN coalesce(p_settled, 0) ELSE 0 END
$$;

-- The UTC day a reservation belongs to.
CREATE OR REPLACE FUNCTION purser_spend_day(p_at timestamptz) RETURNS date
LANGUAGE sql IMMUTABLE AS $$ SELECT (p_at AT TIME ZONE 'UTC')::date $$;

-- Keeps the wallet's window in step with one reservation's change. Whether the reservation is
-- inside the window is decided in the UPDATE, on the window row as it is once its lock is
-- granted: a reservation the window has already moved past is left out, as the move counted it.
CREATE OR REPLACE FUNCTION purser_spend_window_follow() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  v_row spend_reservations;
  v_amount bigint;
  v_count integer;
BEGIN
  IF TG_OP = 'INSERT' THEN
    v_row := NEW;
    v_amount := purser_spend_counted(NEW.state, NEW.amount_micro_usd, NEW.settled_micro_usd);
    v_count := (NEW.state IN ('pending', 'settled'))::integer;
  ELSIF TG_OP = 'UPDATE' THEN
    v_row := NEW;
    v_amount := purser_spend_counted(NEW.state, NEW.amount_micro_usd, NEW.settled_micro_usd)
      - purser_spend_counted(OLD.state, OLD.amount_micro_usd, OLD.settled_micro_usd);
    v_count := (NEW.state IN ('pending', 'settled'))::integer - (OLD.state IN ('pending', 'settled'))::integer;
  ELSE
    v_row := OLD;
    v_amount := -purser_spend_counted(OLD.state, OLD.amount_micro_usd, OLD.settled_micro_usd);
    v_count := -((OLD.state IN ('pending', 'settled'))::integer);
  END IF;
  IF v_amount = 0 AND v_count = 0 THEN
    RETURN NULL;
  END IF;
  UPDATE spend_windows w
     SET day_used_micro_usd = w.day_used_micro_usd
           + CASE WHEN purser_spend_day(v_row.created_at) = w.day THEN v_amount ELSE 0 END,
         hour_count = w.hour_count + CASE WHEN v_row.created_at > w.hour_from THEN v_count ELSE 0 END
   WHERE w.account_id = v_row.account_id AND w.wallet = v_row.wallet;
  RETURN NULL;
END;
$$;
CREATE TRIGGER spend_reservations_window AFTER INSERT OR UPDATE OR DELETE ON spend_reservations
  FOR EACH ROW EXECUTE FUNCTION purser_spend_window_follow();

-- Windows for the wallets that have reservations already, as of the database's clock.
INSERT INTO spend_windows (account_id, wallet, day, day_used_micro_usd, hour_from, hour_count)
SELECT r.account_id, r.wallet, purser_spend_day(now()),
  coalesce(sum(purser_spend_counted(r.state, r.amount_micro_usd, r.settled_micro_usd))
    FILTER (WHERE purser_spend_day(r.created_at) = purser_spend_day(now())), 0),
  now() - interval '1 hour',
  count(*) FILTER (WHERE r.created_at > now() - interval '1 hour' AND r.state IN ('pending', 'settled'))
FROM spend_reservations r
GROUP BY r.account_id, r.wallet;

-- As 0029, with the day's sum and the hour's count read from the wallet's window (moved forward
-- to `p_now` first) less the pending reservations past their expiry that the sweep has not
-- marked yet. A request whose clock is behind the window (it read the clock, then waited for the
-- lock while a later one moved the window), and a wallet's first reservation, count from the
-- reservations themselves as 0029 did.
CREATE OR REPLACE FUNCTION purser_reserve_spend(
  p_account text, p_wallet text, p_id text, p_amount bigint, p_now timestamptz, p_expires timestamptz
) RETURNS TABLE (
  outcome text, policy_version integer, limit_value bigint, used_value bigint
)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  v_policy record;
  v_existing record;
  v_window spend_windows;
  v_per_tx bigint;
  v_daily bigint;
  v_velocity integer;
  v_day date;
  v_day_start timestamptz;
  v_hour_from timestamptz;
  v_day_used bigint;
  v_hour_count integer;
  v_stale record;
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

  v_day := purser_spend_day(p_now);
  v_day_start := v_day::timestamp AT TIME ZONE 'UTC';
  v_hour_from := p_now - interval '1 hour';

  SELECT * INTO v_window FROM spend_windows w
   WHERE w.account_id = p_account AND w.wallet = p_wallet FOR UPDATE;
  IF NOT FOUND THEN
    -- The wallet's first reservation: its window starts from what its reservations count now.
    INSERT INTO spend_windows (account_id, wallet, day, day_used_micro_usd, hour_from, hour_count)
    SELECT p_account, p_wallet, v_day,
      coalesce(sum(purser_spend_counted(r.state, r.amount_micro_usd, r.settled_micro_usd))
        FILTER (WHERE purser_spend_day(r.created_at) = v_day), 0),
      v_hour_from,
      count(*) FILTER (WHERE r.created_at > v_hour_from AND r.state IN ('pending', 'settled'))
    FROM spend_reservations r
    WHERE r.account_id = p_account AND r.wallet = p_wallet
      AND r.created_at >= LEAST(v_day_start, v_hour_from)
    RETURNING * INTO v_window;
  ELSIF v_window.day <= v_day AND v_window.hour_from <= v_hour_from THEN
    -- Move the window to this request's clock: a new day starts from the reservations already
    -- stamped on it (normally none); the hour drops what was created up to an hour ago.
    IF v_window.day < v_day THEN
      SELECT coalesce(sum(purser_spend_counted(r.state, r.amount_micro_usd, r.settled_micro_usd)), 0)
        INTO v_window.day_used_micro_usd
        FROM spend_reservations r
       WHERE r.account_id = p_account AND r.wallet = p_wallet AND r.created_at >= v_day_start
         AND purser_spend_day(r.created_at) = v_day;
      v_window.day := v_day;
    END IF;
    IF v_window.hour_from < v_hour_from THEN
      v_window.hour_count := v_window.hour_count - (
        SELECT count(*)::integer FROM spend_reservations r
         WHERE r.account_id = p_account AND r.wallet = p_wallet
           AND r.created_at > v_window.hour_from AND r.created_at <= v_hour_from
           AND r.state IN ('pending', 'settled'));
      v_window.hour_from := v_hour_from;
    END IF;
    UPDATE spend_windows w
       SET day = v_window.day, day_used_micro_usd = v_window.day_used_micro_usd,
           hour_from = v_window.hour_from, hour_count = v_window.hour_count
     WHERE w.account_id = p_account AND w.wallet = p_wallet;
  ELSE
    v_window := NULL;
  END IF;

  IF v_window.account_id IS NOT NULL THEN
    -- Pending reservations past their expiry count for nothing, though the window still has them.
    SELECT
      coalesce(sum(r.amount_micro_usd) FILTER (WHERE purser_spend_day(r.created_at) = v_day), 0) AS amount,
      count(*) FILTER (WHERE r.created_at > v_hour_from) AS n
      INTO v_stale
      FROM spend_reservations r
     WHERE r.state = 'pending' AND r.expires_at <= p_now
       AND r.account_id = p_account AND r.wallet = p_wallet;
    v_day_used := v_window.day_used_micro_usd - v_stale.amount;
    v_hour_count := v_window.hour_count - v_stale.n;
  ELSE
    SELECT
      COALESCE(SUM(CASE WHEN r.state = 'settled' THEN r.settled_micro_usd ELSE r.amount_micro_usd END)
        FILTER (WHERE r.created_at >= v_day_start), 0),
      COUNT(*) FILTER (WHERE r.created_at > v_hour_from)
      INTO v_day_used, v_hour_count
      FROM spend_reservations r
      WHERE r.account_id = p_account AND r.wallet = p_wallet
        AND r.created_at >= LEAST(v_day_start, v_hour_from)
        AND (r.state = 'settled' OR (r.state = 'pending' AND r.expires_at > p_now));
  END IF;

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
