-- 0028 intents: conversions and gas top-ups admitted under the wallet's active policy and handed
-- to the executor. planned → executing | cancelled | aborted; executing → filled | aborted.
-- The policy version and hash, the spend reservation and the fee taken at admission are fixed.
CREATE TABLE intents (
  id uuid PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  wallet text NOT NULL CHECK (wallet ~ '^0x[0-9a-f]{40}$'),
  chain_id integer NOT NULL,
  kind text NOT NULL CHECK (kind IN ('conversion', 'gas_topup')),
  status text NOT NULL CHECK (status IN ('planned', 'executing', 'filled', 'cancelled', 'aborted')),
  policy_version integer NOT NULL CHECK (policy_version > 0),
  policy_hash text NOT NULL,
  -- sell_token, buy_token, sell_amount, max_slippage_bps, venues, value_usd; on abort also
  -- abort: {reason, detail}.
  params jsonb NOT NULL,
  report jsonb NOT NULL DEFAULT '{}'::jsonb,
  value_micro_usd bigint NOT NULL CHECK (value_micro_usd > 0),
  reservation_id text,                         -- spend_reservations.id (the intent's id); null when
                                               -- the executor's queue refused it (never admitted)
  fee_group_id text,                           -- the fee's ledger group; null with metering off
  fee_micro_usd bigint NOT NULL CHECK (fee_micro_usd >= 0),
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE INDEX intents_account_created ON intents (account_id, created_at DESC, id DESC);
CREATE INDEX intents_account_wallet_created ON intents (account_id, wallet, created_at DESC, id DESC);

-- What admission fixed never changes; status moves only along the state machine (an executing
-- intent may update its report and params while it runs).
CREATE OR REPLACE FUNCTION purser_intent_guard() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF current_setting('purser.retention', true) = 'on' THEN
    IF TG_OP = 'DELETE' THEN RETURN OLD; END IF;
    RETURN NEW;
  END IF;
  IF TG_OP = 'DELETE' THEN
    RAISE EXCEPTION 'intents rows are never deleted' USING ERRCODE = 'P0001';
  END IF;
  IF NEW.id <> OLD.id OR NEW.account_id <> OLD.account_id OR NEW.wallet <> OLD.wallet
     OR NEW.chain_id <> OLD.chain_id OR NEW.kind <> OLD.kind
     OR NEW.policy_version <> OLD.policy_version OR NEW.policy_hash <> OLD.policy_hash
     OR NEW.value_micro_usd <> OLD.value_micro_usd
     OR NEW.reservation_id IS DISTINCT FROM OLD.reservation_id
     OR NEW.fee_group_id IS DISTINCT FROM OLD.fee_group_id OR NEW.fee_micro_usd <> OLD.fee_micro_usd
     OR NEW.created_at <> OLD.created_at
     OR (NEW.params->'sell_token') IS DISTINCT FROM (OLD.params->'sell_token')
     OR (NEW.params->'buy_token') IS DISTINCT FROM (OLD.params->'buy_token')
     OR (NEW.params->'sell_amount') IS DISTINCT FROM (OLD.params->'sell_amount')
     OR NOT ((OLD.status = 'planned' AND NEW.status IN ('executing', 'cancelled', 'aborted'))
          OR (OLD.status = 'executing' AND NEW.status IN ('executing', 'filled', 'aborted'))) THEN
    RAISE EXCEPTION 'intent %: change % -> % refused', OLD.id, OLD.status, NEW.status
      USING ERRCODE = 'P0001';
  END IF;
  RETURN NEW;
END;
$$;
CREATE TRIGGER intents_guard BEFORE UPDATE OR DELETE ON intents
  FOR EACH ROW EXECUTE FUNCTION purser_intent_guard();
