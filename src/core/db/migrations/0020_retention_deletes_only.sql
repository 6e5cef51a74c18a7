-- 0020 retention deletes, it never edits. `SET LOCAL purser.retention = 'on'` (set only by the
-- housekeeping sweep that deletes a development test-fixture account with everything it owns) used
-- to let UPDATE through the append-only and state-machine guards as well, and TRUNCATE through
-- the ledger's. Now it lets DELETE through and nothing else: with the flag on, an UPDATE still
-- meets the guard's usual rules (refused on append-only tables) and a TRUNCATE is still refused.
-- The four guards share one test of the flag instead of each repeating it.

CREATE OR REPLACE FUNCTION purser_retention_delete(p_op text) RETURNS boolean
LANGUAGE sql STABLE AS $$
  SELECT p_op = 'DELETE' AND coalesce(current_setting('purser.retention', true), '') = 'on'
$$;

CREATE OR REPLACE FUNCTION purser_refuse_change() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF purser_retention_delete(TG_OP) THEN RETURN OLD; END IF;
  RAISE EXCEPTION 'table % is append-only: % refused', TG_TABLE_NAME, TG_OP
    USING ERRCODE = 'P0001';
END;
$$;

CREATE OR REPLACE FUNCTION purser_reservation_guard() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF purser_retention_delete(TG_OP) THEN RETURN OLD; END IF;
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

CREATE OR REPLACE FUNCTION purser_delegation_guard() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF purser_retention_delete(TG_OP) THEN RETURN OLD; END IF;
  IF TG_OP = 'DELETE' THEN
    RAISE EXCEPTION 'delegations rows are never deleted' USING ERRCODE = 'P0001';
  END IF;
  IF NEW.id <> OLD.id OR NEW.account_id <> OLD.account_id OR NEW.wallet <> OLD.wallet
     OR NEW.chain_id <> OLD.chain_id OR NEW.permission_id <> OLD.permission_id
     OR NEW.enable_data <> OLD.enable_data OR NEW.selector_data <> OLD.selector_data
     OR NEW.kernel_nonce <> OLD.kernel_nonce OR NEW.digest <> OLD.digest
     OR NEW.session_key <> OLD.session_key OR NEW.scope <> OLD.scope
     OR NEW.valid_until <> OLD.valid_until OR NEW.created_at <> OLD.created_at
     OR NOT ((OLD.status = 'prepared' AND NEW.status IN ('active', 'revoked', 'expired'))
          OR (OLD.status = 'active' AND NEW.status IN ('revoked', 'expired'))) THEN
    RAISE EXCEPTION 'delegation %: change % -> % refused', OLD.id, OLD.status, NEW.status
      USING ERRCODE = 'P0001';
  END IF;
  RETURN NEW;
END;
$$;

CREATE OR REPLACE FUNCTION purser_ledger_hold_guard() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF purser_retention_delete(TG_OP) THEN RETURN OLD; END IF;
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
