-- 0033 an aborted intent's report may still grow: a run interrupted with an operation unconfirmed
-- ends `aborted`, and when that operation lands afterwards its fill is ledgered and the slice is
-- added to the report (docs/executor.md, "Slices of ended runs"). Nothing else of an aborted
-- intent changes; the rest of 0028's guard is as it was.
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
          OR (OLD.status = 'executing' AND NEW.status IN ('executing', 'filled', 'aborted'))
          OR (OLD.status = 'aborted' AND NEW.status = 'aborted' AND NEW.params = OLD.params)) THEN
    RAISE EXCEPTION 'intent %: change % -> % refused', OLD.id, OLD.status, NEW.status
      USING ERRCODE = 'P0001';
  END IF;
  RETURN NEW;
END;
$$;
