-- 0008 delegations: ZeroDev Kernel v3 session-key grants naming the executor as session signer.
-- prepared → active (confirm) | revoked | expired; active → revoked | expired. Everything the
-- owner signed over (enable data, selector data, nonce, digest) is fixed at prepare.
CREATE TABLE delegations (
  id uuid PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  wallet text NOT NULL,                        -- the smart account, lowercase 0x address
  chain_id integer NOT NULL CHECK (chain_id IN (8453, 84532)),
  status text NOT NULL CHECK (status IN ('prepared', 'active', 'revoked', 'expired')),
  permission_id text NOT NULL CHECK (permission_id ~ '^0x[0-9a-f]{8}$'),
  validation_id text NOT NULL,
  kernel_version text NOT NULL,
  domain_version text NOT NULL,
  enable_data text NOT NULL,
  selector_data text NOT NULL,
  kernel_nonce integer NOT NULL CHECK (kernel_nonce >= 0),
  digest text NOT NULL,
  session_key text NOT NULL,
  modules jsonb NOT NULL,                      -- the module addresses the enable data names
  scope jsonb NOT NULL,                        -- calls, valid_after, valid_until, rate_limit
  valid_after bigint NOT NULL CHECK (valid_after >= 0),
  valid_until bigint NOT NULL CHECK (valid_until > valid_after),
  account_deployed boolean NOT NULL,
  policy_version integer NOT NULL,
  renewed_from uuid REFERENCES delegations (id) ON DELETE CASCADE,
  enable_sig text,
  owner text,
  created_at timestamptz NOT NULL,
  confirmed_at timestamptz,
  revoked_at timestamptz,
  expired_at timestamptz
);
-- A permissionId is never reused on a smart account (Kernel and every policy refuse a reinstall).
CREATE UNIQUE INDEX delegations_permission_unique ON delegations (chain_id, wallet, permission_id);
CREATE INDEX delegations_account_created ON delegations (account_id, created_at DESC, id DESC);
CREATE INDEX delegations_open_expiry ON delegations (valid_until) WHERE status IN ('prepared', 'active');

-- What the owner signed never changes; status moves only along the state machine, once each.
CREATE OR REPLACE FUNCTION purser_delegation_guard() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF current_setting('purser.retention', true) = 'on' THEN
    IF TG_OP = 'DELETE' THEN RETURN OLD; END IF;
    RETURN NEW;
  END IF;
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
CREATE TRIGGER delegations_guard BEFORE UPDATE OR DELETE ON delegations
  FOR EACH ROW EXECUTE FUNCTION purser_delegation_guard();
