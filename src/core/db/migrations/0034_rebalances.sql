-- 0034 rebalances: native USDC moved between chains over CCTP V2 by the treasury executor (burn
-- on the source chain, mint on the destination once Circle attests the burn). docs/rebalances.md.
-- planned → executing | cancelled | aborted; executing → filled | aborted.
CREATE TABLE rebalances (
  id uuid PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  wallet text NOT NULL CHECK (wallet ~ '^0x[0-9a-f]{40}$'),   -- the executor: burns and receives
  from_chain_id integer NOT NULL,
  to_chain_id integer NOT NULL CHECK (to_chain_id <> from_chain_id),
  amount numeric(78, 0) NOT NULL CHECK (amount > 0),           -- USDC base units burned
  finality text NOT NULL CHECK (finality IN ('fast', 'standard')),
  max_fee numeric(78, 0) NOT NULL CHECK (max_fee >= 0 AND max_fee < amount),
  status text NOT NULL CHECK (status IN ('planned', 'executing', 'filled', 'cancelled', 'aborted')),
  phase text NOT NULL CHECK (phase IN ('burn_pending', 'burn_submitted', 'awaiting_attestation',
                                        'mint_submitted', 'minted')),
  policy_version integer NOT NULL CHECK (policy_version > 0),
  policy_hash text NOT NULL,
  day date NOT NULL,                                           -- UTC day of admission (daily cap)
  burn_tx text CHECK (burn_tx IS NULL OR burn_tx ~ '^0x[0-9a-f]{64}$'),
  mint_tx text CHECK (mint_tx IS NULL OR mint_tx ~ '^0x[0-9a-f]{64}$'),
  -- The attested message (hex) and its CCTP nonce, once the attestation service gave them.
  message text,
  message_nonce text CHECK (message_nonce IS NULL OR message_nonce ~ '^0x[0-9a-f]{64}$'),
  report jsonb NOT NULL DEFAULT '{}'::jsonb,                   -- fee, minted, gas; abort/cancel reason
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE INDEX rebalances_wallet_day ON rebalances (wallet, day);
CREATE INDEX rebalances_open ON rebalances (phase, updated_at) WHERE status IN ('planned', 'executing');

CREATE OR REPLACE FUNCTION purser_rebalance_guard() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF current_setting('purser.retention', true) = 'on' THEN
    IF TG_OP = 'DELETE' THEN RETURN OLD; END IF;
    RETURN NEW;
  END IF;
  IF TG_OP = 'DELETE' THEN
    RAISE EXCEPTION 'rebalances rows are never deleted' USING ERRCODE = 'P0001';
  END IF;
  IF NEW.id <> OLD.id OR NEW.account_id <> OLD.account_id OR NEW.wallet <> OLD.wallet
     OR NEW.from_chain_id <> OLD.from_chain_id OR NEW.to_chain_id <> OLD.to_chain_id
     OR NEW.amount <> OLD.amount OR NEW.finality <> OLD.finality OR NEW.max_fee <> OLD.max_fee
     OR NEW.policy_version <> OLD.policy_version OR NEW.policy_hash <> OLD.policy_hash
     OR NEW.day <> OLD.day OR NEW.created_at <> OLD.created_at
     -- A burn still unconfirmed may be replaced (the same nonce, higher fees): its hash changes
     -- only then.
     OR (OLD.burn_tx IS NOT NULL AND NEW.burn_tx IS DISTINCT FROM OLD.burn_tx AND OLD.phase <> 'burn_submitted')
     OR (OLD.message_nonce IS NOT NULL AND NEW.message_nonce IS DISTINCT FROM OLD.message_nonce)
     -- Phases move forward only (a mint that did not land goes back to awaiting its attestation).
     OR NOT (NEW.phase = OLD.phase
          OR (OLD.phase = 'burn_pending' AND NEW.phase = 'burn_submitted')
          OR (OLD.phase = 'burn_submitted' AND NEW.phase = 'awaiting_attestation')
          OR (OLD.phase = 'awaiting_attestation' AND NEW.phase IN ('mint_submitted', 'minted'))
          OR (OLD.phase = 'mint_submitted' AND NEW.phase IN ('awaiting_attestation', 'minted')))
     -- Nothing moved yet is the only way to end without moving value; filled means minted.
     OR (NEW.status = 'aborted' AND NEW.phase NOT IN ('burn_pending', 'burn_submitted'))
     OR (NEW.status = 'cancelled' AND NEW.phase <> 'burn_pending')
     OR (NEW.status = 'filled' AND NEW.phase <> 'minted')
     OR NOT ((OLD.status = 'planned' AND NEW.status IN ('planned', 'executing', 'cancelled', 'aborted'))
          OR (OLD.status = 'executing' AND NEW.status IN ('executing', 'filled', 'aborted'))) THEN
    RAISE EXCEPTION 'rebalance %: change % -> % refused', OLD.id, OLD.status, NEW.status
      USING ERRCODE = 'P0001';
  END IF;
  RETURN NEW;
END;
$$;
CREATE TRIGGER rebalances_guard BEFORE UPDATE OR DELETE ON rebalances
  FOR EACH ROW EXECUTE FUNCTION purser_rebalance_guard();

-- Transactions the executor key signs itself (not UserOperations): each recorded, signed, BEFORE
-- it is broadcast, so a restart finds every transaction that may be in flight and sends the same
-- bytes again (one nonce lands once: nothing executes twice). The (chain, sender, nonce) part of
-- the key is the nonce manager: nonces are handed out under a per-chain lock, in order.
CREATE TABLE executor_transactions (
  chain_id integer NOT NULL,
  sender text NOT NULL CHECK (sender ~ '^0x[0-9a-f]{40}$'),
  nonce bigint NOT NULL CHECK (nonce >= 0),
  -- 1, then 2, 3… for replacements: the same transaction signed again on the same nonce with
  -- higher fees when it stayed unconfirmed; at most one attempt of a nonce is ever mined.
  attempt integer NOT NULL CHECK (attempt >= 1),
  hash text NOT NULL UNIQUE CHECK (hash ~ '^0x[0-9a-f]{64}$'),
  raw text NOT NULL,                           -- the signed serialized transaction
  purpose text NOT NULL,                       -- rebalance.approve | rebalance.burn | rebalance.mint
  rebalance_id uuid NOT NULL REFERENCES rebalances (id) ON DELETE CASCADE,
  -- signed: recorded, maybe sent; mined / reverted: included (its status); dropped: its nonce
  -- was used by another transaction, so it can never be included.
  state text NOT NULL CHECK (state IN ('signed', 'mined', 'reverted', 'dropped')),
  block_number bigint,
  gas_used numeric(78, 0),
  effective_gas_price numeric(78, 0),
  l1_fee numeric(78, 0),                       -- OP-stack chains (Base): the L1 data fee, paid too
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (chain_id, sender, nonce, attempt)
);
CREATE INDEX executor_transactions_subject ON executor_transactions (rebalance_id, created_at);
CREATE INDEX executor_transactions_signed ON executor_transactions (created_at) WHERE state = 'signed';
