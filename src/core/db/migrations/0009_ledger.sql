-- 0009 ledger: the append-only double-entry ledger, two-phase holds and the prepaid balance rows.
-- The chart of accounts, the asset identifiers and the sign convention are in docs/ledger.md.
--
-- Sign convention: an entry's amount is signed, debit positive and credit negative, in the
-- asset's base units (token base units; micro-USD for `USD`). Every group sums to zero per asset.

-- Entry groups: one booking (a fee, a top-up, a fill, a reversal). `seq` is the ledger position.
CREATE TABLE ledger_groups (
  seq bigserial PRIMARY KEY,
  id text NOT NULL UNIQUE,                  -- lgr_…
  settlement_id text NOT NULL UNIQUE,       -- booked once: fee:…, topup:…, fill:…, tx:<hash>:<log>
  fingerprint text NOT NULL,                -- sha256 of the account and the sorted entries
  account_id text REFERENCES accounts (id) ON DELETE CASCADE,  -- null: platform-only bookings
  kind text NOT NULL CHECK (kind ~ '^[a-z][a-z0-9_.]{0,63}$'),
  policy_hash text CHECK (policy_hash ~ '^sha256:[0-9a-f]{64}$'),
  reverses text UNIQUE REFERENCES ledger_groups (id),          -- a group is reversed at most once
  memo jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at timestamptz NOT NULL
);
CREATE INDEX ledger_groups_account_seq ON ledger_groups (account_id, seq);
CREATE TRIGGER ledger_groups_append_only BEFORE UPDATE OR DELETE ON ledger_groups
  FOR EACH ROW EXECUTE FUNCTION purser_refuse_change();
CREATE TRIGGER ledger_groups_no_truncate BEFORE TRUNCATE ON ledger_groups
  FOR EACH STATEMENT EXECUTE FUNCTION purser_refuse_change();

CREATE TABLE ledger_entries (
  seq bigserial PRIMARY KEY,
  group_id text NOT NULL REFERENCES ledger_groups (id) ON DELETE CASCADE,
  ledger_account text NOT NULL CHECK (
    ledger_account ~ '^account:[A-Za-z0-9_]+:prepaid$'
    OR ledger_account IN ('platform:fee_revenue', 'platform:treasury')
    OR ledger_account ~ '^wallet:[0-9]+:0x[0-9a-f]{40}$'
    OR ledger_account ~ '^venue:[a-z0-9-]+:[0-9]+$'
    OR ledger_account ~ '^bridge:[a-z0-9-]+:[0-9]+:[0-9]+$'
    OR ledger_account ~ '^external:[0-9]+$'),
  asset text NOT NULL CHECK (
    asset = 'USD'
    OR asset ~ '^eip155:[0-9]+/(erc20:0x[0-9a-f]{40}|erc1155:0x[0-9a-f]{40}/(0|[1-9][0-9]*)|slip44:[0-9]+)$'),
  amount numeric(78, 0) NOT NULL CHECK (amount <> 0),
  -- The prepaid balance is a USD liability, never a token.
  CHECK (ledger_account NOT LIKE 'account:%' OR asset = 'USD')
);
CREATE INDEX ledger_entries_group ON ledger_entries (group_id);
CREATE INDEX ledger_entries_account_asset ON ledger_entries (ledger_account, asset, seq) INCLUDE (amount);
CREATE TRIGGER ledger_entries_append_only BEFORE UPDATE OR DELETE ON ledger_entries
  FOR EACH ROW EXECUTE FUNCTION purser_refuse_change();
CREATE TRIGGER ledger_entries_no_truncate BEFORE TRUNCATE ON ledger_entries
  FOR EACH STATEMENT EXECUTE FUNCTION purser_refuse_change();

-- Every group the statement touched must sum to zero per asset when the statement ends, so a
-- group's entries are written by one statement and an unbalanced one aborts the transaction.
CREATE OR REPLACE FUNCTION purser_ledger_check_balanced() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  v record;
BEGIN
  SELECT e.group_id, e.asset, SUM(e.amount) AS total INTO v
    FROM ledger_entries e
    WHERE e.group_id IN (SELECT DISTINCT n.group_id FROM new_entries n)
    GROUP BY e.group_id, e.asset
    HAVING SUM(e.amount) <> 0
    LIMIT 1;
  IF FOUND THEN
    RAISE EXCEPTION 'ledger group % does not balance in %: its entries sum to %', v.group_id, v.asset, v.total
      USING ERRCODE = '23514';
  END IF;
  RETURN NULL;
END;
$$;
CREATE TRIGGER ledger_entries_balanced AFTER INSERT ON ledger_entries
  REFERENCING NEW TABLE AS new_entries
  FOR EACH STATEMENT EXECUTE FUNCTION purser_ledger_check_balanced();

-- The prepaid balance of each account, in micro-USD: minus the sum of the entries of
-- `account:<id>:prepaid`, kept in step by purser_ledger_post in the statement that books them.
-- `held_micro` is what pending holds on the prepaid balance reserve.
CREATE TABLE prepaid_balances (
  account_id text PRIMARY KEY REFERENCES accounts (id) ON DELETE CASCADE,
  balance_micro bigint NOT NULL CHECK (balance_micro >= 0),
  held_micro bigint NOT NULL DEFAULT 0 CHECK (held_micro >= 0 AND held_micro <= balance_micro),
  updated_at timestamptz NOT NULL
);

-- Two-phase holds: pending → posted (fully or partly) | voided | expired, each at most once.
CREATE TABLE ledger_holds (
  id text PRIMARY KEY,                      -- the caller's hold identity
  account_id text REFERENCES accounts (id) ON DELETE CASCADE,
  kind text NOT NULL CHECK (kind ~ '^[a-z][a-z0-9_.]{0,63}$'),
  debit_account text NOT NULL,              -- posting debits this ledger account…
  credit_account text NOT NULL,             -- …and credits this one
  asset text NOT NULL,
  amount numeric(78, 0) NOT NULL CHECK (amount > 0),
  posted_amount numeric(78, 0) CHECK (posted_amount > 0 AND posted_amount <= amount),
  state text NOT NULL CHECK (state IN ('pending', 'posted', 'voided', 'expired')),
  cap_key text,                             -- holds sharing a cap: pending plus posted count
  policy_hash text CHECK (policy_hash ~ '^sha256:[0-9a-f]{64}$'),
  posted_group_id text REFERENCES ledger_groups (id),
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  closed_at timestamptz,
  CHECK ((state = 'posted') = (posted_amount IS NOT NULL AND posted_group_id IS NOT NULL))
);
CREATE INDEX ledger_holds_cap ON ledger_holds (cap_key) WHERE cap_key IS NOT NULL;
CREATE INDEX ledger_holds_pending_expiry ON ledger_holds (expires_at) WHERE state = 'pending';

CREATE OR REPLACE FUNCTION purser_ledger_hold_guard() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF current_setting('purser.retention', true) = 'on' THEN
    IF TG_OP = 'DELETE' THEN RETURN OLD; END IF;
    RETURN NEW;
  END IF;
  IF TG_OP = 'DELETE' THEN
    RAISE EXCEPTION 'ledger_holds rows are never deleted' USING ERRCODE = 'P0001';
  END IF;
  IF OLD.state <> 'pending' OR NEW.state = 'pending'
     OR NEW.id <> OLD.id OR NEW.account_id IS DISTINCT FROM OLD.account_id OR NEW.kind <> OLD.kind
     OR NEW.debit_account <> OLD.debit_account OR NEW.credit_account <> OLD.credit_account
     OR NEW.asset <> OLD.asset OR NEW.amount <> OLD.amount
     OR NEW.cap_key IS DISTINCT FROM OLD.cap_key OR NEW.policy_hash IS DISTINCT FROM OLD.policy_hash
     OR NEW.created_at <> OLD.created_at OR NEW.expires_at <> OLD.expires_at THEN
    RAISE EXCEPTION 'ledger hold %: transition % -> % refused', OLD.id, OLD.state, NEW.state
      USING ERRCODE = 'P0001';
  END IF;
  RETURN NEW;
END;
$$;
CREATE TRIGGER ledger_holds_guard BEFORE UPDATE OR DELETE ON ledger_holds
  FOR EACH ROW EXECUTE FUNCTION purser_ledger_hold_guard();

-- Books one group in one round trip. The caller (src/modules/ledger) has checked that the entries
-- balance per asset; the statement trigger above checks it again.
--
-- 1. A group with this settlement identity exists: 'replayed' when its fingerprint (account and
--    entries) is the same, else 'conflict'. Nothing is written.
-- 2. A group reversing `p_reverses` exists already: 'conflict'.
-- 3. Each prepaid account the entries touch has its balance row moved in the statement that
--    checks it (a conditional UPDATE): a debit beyond the available balance (balance minus
--    holds) answers 'insufficient' with that balance, and everything already moved is put back.
-- 4. The group and its entries are inserted: 'ok'. A concurrent booking of the same settlement
--    wins the unique key; this one then puts its balance moves back and answers as in 1.
--
-- `prepaid_account`/`prepaid_balance`: the first prepaid account touched and its balance after.
CREATE OR REPLACE FUNCTION purser_ledger_post(
  p_group_id text, p_settlement text, p_fingerprint text, p_account text, p_kind text,
  p_policy_hash text, p_reverses text, p_memo jsonb, p_now timestamptz,
  p_ledger_accounts text[], p_assets text[], p_amounts numeric[]
) RETURNS TABLE (
  outcome text, group_id text, group_seq bigint, prepaid_account text, prepaid_balance bigint
)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  v_existing record;
  v_move record;
  v_moved_ids text[] := '{}';
  v_moved_deltas bigint[] := '{}';
  v_balance bigint;
  v_first_id text;
  v_first_balance bigint;
  v_seq bigint;
  i integer;
BEGIN
  SELECT g.id, g.seq, g.fingerprint INTO v_existing FROM ledger_groups g WHERE g.settlement_id = p_settlement;
  IF FOUND THEN
    RETURN QUERY SELECT CASE WHEN v_existing.fingerprint = p_fingerprint THEN 'replayed' ELSE 'conflict' END,
      v_existing.id, v_existing.seq, NULL::text, NULL::bigint;
    RETURN;
  END IF;
  IF p_reverses IS NOT NULL THEN
    SELECT g.id, g.seq INTO v_existing FROM ledger_groups g WHERE g.reverses = p_reverses;
    IF FOUND THEN
      RETURN QUERY SELECT 'conflict'::text, v_existing.id, v_existing.seq, NULL::text, NULL::bigint;
      RETURN;
    END IF;
  END IF;

  -- Prepaid balance moves, in account order (two bookings never lock two rows in opposite order).
  FOR v_move IN
    SELECT split_part(u.a, ':', 2) AS acc, (-SUM(u.m))::bigint AS delta
      FROM unnest(p_ledger_accounts, p_amounts) AS u(a, m)
      WHERE u.a LIKE 'account:%:prepaid'
      GROUP BY 1 ORDER BY 1
  LOOP
    IF v_move.delta < 0 THEN
      UPDATE prepaid_balances b
         SET balance_micro = b.balance_micro + v_move.delta, updated_at = p_now
       WHERE b.account_id = v_move.acc AND b.balance_micro - b.held_micro + v_move.delta >= 0
      RETURNING b.balance_micro INTO v_balance;
      IF NOT FOUND THEN
        FOR i IN 1 .. coalesce(array_length(v_moved_ids, 1), 0) LOOP
          UPDATE prepaid_balances b SET balance_micro = b.balance_micro - v_moved_deltas[i]
           WHERE b.account_id = v_moved_ids[i];
        END LOOP;
        SELECT b.balance_micro - b.held_micro INTO v_balance FROM prepaid_balances b WHERE b.account_id = v_move.acc;
        RETURN QUERY SELECT 'insufficient'::text, NULL::text, NULL::bigint, v_move.acc, coalesce(v_balance, 0);
        RETURN;
      END IF;
    ELSIF v_move.delta > 0 THEN
      INSERT INTO prepaid_balances AS b (account_id, balance_micro, held_micro, updated_at)
      VALUES (v_move.acc, v_move.delta, 0, p_now)
      ON CONFLICT (account_id) DO UPDATE
        SET balance_micro = b.balance_micro + EXCLUDED.balance_micro, updated_at = EXCLUDED.updated_at
      RETURNING b.balance_micro INTO v_balance;
    ELSE
      SELECT b.balance_micro INTO v_balance FROM prepaid_balances b WHERE b.account_id = v_move.acc;
    END IF;
    v_moved_ids := v_moved_ids || v_move.acc;
    v_moved_deltas := v_moved_deltas || v_move.delta;
    IF v_first_id IS NULL THEN
      v_first_id := v_move.acc;
      v_first_balance := coalesce(v_balance, 0);
    END IF;
  END LOOP;

  INSERT INTO ledger_groups (id, settlement_id, fingerprint, account_id, kind, policy_hash, reverses, memo, created_at)
  VALUES (p_group_id, p_settlement, p_fingerprint, p_account, p_kind, p_policy_hash, p_reverses,
    coalesce(p_memo, '{}'::jsonb), p_now)
  ON CONFLICT (settlement_id) DO NOTHING
  RETURNING seq INTO v_seq;
  IF v_seq IS NULL THEN
    FOR i IN 1 .. coalesce(array_length(v_moved_ids, 1), 0) LOOP
      UPDATE prepaid_balances b SET balance_micro = b.balance_micro - v_moved_deltas[i]
       WHERE b.account_id = v_moved_ids[i];
    END LOOP;
    SELECT g.id, g.seq, g.fingerprint INTO v_existing FROM ledger_groups g WHERE g.settlement_id = p_settlement;
    RETURN QUERY SELECT CASE WHEN v_existing.fingerprint = p_fingerprint THEN 'replayed' ELSE 'conflict' END,
      v_existing.id, v_existing.seq, NULL::text, NULL::bigint;
    RETURN;
  END IF;

  INSERT INTO ledger_entries (group_id, ledger_account, asset, amount)
  SELECT p_group_id, u.a, u.s, u.m
    FROM unnest(p_ledger_accounts, p_assets, p_amounts) WITH ORDINALITY AS u(a, s, m, n)
    ORDER BY u.n;

  RETURN QUERY SELECT 'ok'::text, p_group_id, v_seq, v_first_id, v_first_balance;
END;
$$;

-- Places a hold in one round trip. 'replayed' (same id, same terms), 'conflict' (the id holds
-- other terms), 'cap_exceeded' (with `used`: pending holds the clock has not expired plus posted
-- amounts under `p_cap_key`, before this one), 'insufficient' (a hold on a prepaid balance beyond
-- what is available, with `used` = the available balance) or 'ok'. Holds sharing a cap key are
-- serialized by an advisory lock on it.
CREATE OR REPLACE FUNCTION purser_ledger_place_hold(
  p_id text, p_account text, p_kind text, p_debit text, p_credit text, p_asset text, p_amount numeric,
  p_cap_key text, p_cap_limit numeric, p_policy_hash text, p_now timestamptz, p_expires timestamptz
) RETURNS TABLE (outcome text, used numeric)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  v_existing record;
  v_used numeric;
  v_available bigint;
BEGIN
  IF p_cap_key IS NOT NULL THEN
    PERFORM pg_advisory_xact_lock(hashtextextended('purser.hold-cap:' || p_cap_key, 0));
  END IF;
  SELECT h.* INTO v_existing FROM ledger_holds h WHERE h.id = p_id;
  IF FOUND THEN
    IF v_existing.account_id IS NOT DISTINCT FROM p_account AND v_existing.kind = p_kind
       AND v_existing.debit_account = p_debit AND v_existing.credit_account = p_credit
       AND v_existing.asset = p_asset AND v_existing.amount = p_amount
       AND v_existing.cap_key IS NOT DISTINCT FROM p_cap_key THEN
      RETURN QUERY SELECT 'replayed'::text, NULL::numeric;
    ELSE
      RETURN QUERY SELECT 'conflict'::text, NULL::numeric;
    END IF;
    RETURN;
  END IF;
  IF p_cap_key IS NOT NULL THEN
    SELECT coalesce(SUM(CASE WHEN h.state = 'posted' THEN h.posted_amount ELSE h.amount END), 0) INTO v_used
      FROM ledger_holds h
     WHERE h.cap_key = p_cap_key
       AND (h.state = 'posted' OR (h.state = 'pending' AND h.expires_at > p_now));
    IF v_used + p_amount > p_cap_limit THEN
      RETURN QUERY SELECT 'cap_exceeded'::text, v_used;
      RETURN;
    END IF;
  END IF;
  IF p_debit LIKE 'account:%:prepaid' THEN
    UPDATE prepaid_balances b SET held_micro = b.held_micro + p_amount::bigint, updated_at = p_now
     WHERE b.account_id = split_part(p_debit, ':', 2)
       AND b.balance_micro - b.held_micro >= p_amount::bigint;
    IF NOT FOUND THEN
      SELECT b.balance_micro - b.held_micro INTO v_available FROM prepaid_balances b
       WHERE b.account_id = split_part(p_debit, ':', 2);
      RETURN QUERY SELECT 'insufficient'::text, coalesce(v_available, 0)::numeric;
      RETURN;
    END IF;
  END IF;
  INSERT INTO ledger_holds (id, account_id, kind, debit_account, credit_account, asset, amount, state,
    cap_key, policy_hash, created_at, expires_at)
  VALUES (p_id, p_account, p_kind, p_debit, p_credit, p_asset, p_amount, 'pending',
    p_cap_key, p_policy_hash, p_now, p_expires);
  RETURN QUERY SELECT 'ok'::text, NULL::numeric;
END;
$$;

-- Closes a pending hold: posts `p_amount` of it (then `p_state` = 'posted': one group debiting
-- the hold's debit account and crediting its credit account, settlement `hold:<id>`), or voids or
-- expires it. At most once: 'not_found', 'closed' (with the state), 'expired' (posting after the
-- clock passed its expiry), 'exceeds_held', 'insufficient' (posting from a prepaid balance: never
-- with a prepaid hold, whose amount is reserved) or 'ok' (with the group of a post).
CREATE OR REPLACE FUNCTION purser_ledger_close_hold(
  p_id text, p_account text, p_state text, p_amount numeric, p_group_id text, p_fingerprint text,
  p_now timestamptz
) RETURNS TABLE (outcome text, state text, group_id text)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  v_hold record;
  v_post record;
BEGIN
  SELECT h.* INTO v_hold FROM ledger_holds h
   WHERE h.id = p_id AND h.account_id IS NOT DISTINCT FROM p_account
   FOR UPDATE;
  IF NOT FOUND THEN
    RETURN QUERY SELECT 'not_found'::text, NULL::text, NULL::text;
    RETURN;
  END IF;
  IF v_hold.state <> 'pending' THEN
    RETURN QUERY SELECT 'closed'::text, v_hold.state, v_hold.posted_group_id;
    RETURN;
  END IF;
  IF p_state = 'posted' AND v_hold.expires_at <= p_now THEN
    RETURN QUERY SELECT 'expired'::text, v_hold.state, NULL::text;
    RETURN;
  END IF;
  IF p_state = 'expired' AND v_hold.expires_at > p_now THEN
    RETURN QUERY SELECT 'not_expired'::text, v_hold.state, NULL::text;
    RETURN;
  END IF;
  IF p_state = 'posted' AND (p_amount <= 0 OR p_amount > v_hold.amount) THEN
    RETURN QUERY SELECT 'exceeds_held'::text, v_hold.state, NULL::text;
    RETURN;
  END IF;
  -- A prepaid hold gives its reservation back first, so the posting finds the funds available.
  IF v_hold.debit_account LIKE 'account:%:prepaid' THEN
    UPDATE prepaid_balances b SET held_micro = b.held_micro - v_hold.amount::bigint, updated_at = p_now
     WHERE b.account_id = split_part(v_hold.debit_account, ':', 2);
  END IF;
  IF p_state = 'posted' THEN
    SELECT * INTO v_post FROM purser_ledger_post(p_group_id, 'hold:' || p_id, p_fingerprint, v_hold.account_id,
      v_hold.kind, v_hold.policy_hash, NULL, jsonb_build_object('hold_id', p_id), p_now,
      ARRAY[v_hold.debit_account, v_hold.credit_account], ARRAY[v_hold.asset, v_hold.asset],
      ARRAY[p_amount, -p_amount]);
    IF v_post.outcome <> 'ok' THEN
      IF v_hold.debit_account LIKE 'account:%:prepaid' THEN
        UPDATE prepaid_balances b SET held_micro = b.held_micro + v_hold.amount::bigint
         WHERE b.account_id = split_part(v_hold.debit_account, ':', 2);
      END IF;
      RETURN QUERY SELECT v_post.outcome, v_hold.state, v_post.group_id;
      RETURN;
    END IF;
    UPDATE ledger_holds h SET state = 'posted', posted_amount = p_amount, posted_group_id = v_post.group_id,
      closed_at = p_now WHERE h.id = p_id;
    RETURN QUERY SELECT 'ok'::text, 'posted'::text, v_post.group_id;
    RETURN;
  END IF;
  UPDATE ledger_holds h SET state = p_state, closed_at = p_now WHERE h.id = p_id;
  RETURN QUERY SELECT 'ok'::text, p_state, NULL::text;
END;
$$;
