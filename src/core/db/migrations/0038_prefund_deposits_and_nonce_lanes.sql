-- 0038 two things that let one wallet run several intents at once (docs/executor.md, "One wallet,
-- many intents"; docs/smart-accounts.md, "Prefund deposits").
--
-- prefund_deposits: every EntryPoint.depositTo the relayer makes for an account's prefund, signed
-- and recorded BEFORE it is broadcast, and booked from its receipt whatever becomes of the
-- operation it was made for. Before this a deposit was only a fact of the slice that asked for
-- it, so deposits made for slices that were dropped, or never recorded, went unbooked.
CREATE TABLE prefund_deposits (
  id text PRIMARY KEY,                         -- pfd_…
  account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  chain_id integer NOT NULL,
  wallet text NOT NULL CHECK (wallet ~ '^0x[0-9a-f]{40}$'),
  -- What asked for it (informational: the deposit belongs to the account, not to the operation).
  intent_id uuid,
  slice_seq integer,
  amount_wei numeric(78, 0) NOT NULL CHECK (amount_wei > 0),
  relayer text NOT NULL CHECK (relayer ~ '^0x[0-9a-f]{40}$'),
  nonce bigint NOT NULL CHECK (nonce >= 0),
  tx_hash text NOT NULL UNIQUE CHECK (tx_hash ~ '^0x[0-9a-f]{64}$'),
  raw_tx text NOT NULL,                        -- the signed transaction, sent again after a crash
  -- signed: recorded, maybe sent; booked: mined and in the ledger; reverted: mined, nothing
  -- deposited (the relayer paid the gas); dropped: never mined, its nonce went to another.
  state text NOT NULL CHECK (state IN ('signed', 'booked', 'reverted', 'dropped')),
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE INDEX prefund_deposits_open ON prefund_deposits (chain_id, wallet) WHERE state = 'signed';
CREATE INDEX prefund_deposits_account ON prefund_deposits (account_id);
CREATE INDEX prefund_deposits_slice ON prefund_deposits (intent_id, slice_seq);

-- wallet_nonce_lanes: a Kernel account's nonce keys the executor runs operations on at once.
-- Kernel v3's nonce key ends in a 2-byte custom key; each lane is one such key, held by at most
-- one intent while its operation is in flight, so two operations of one wallet never share a
-- nonce. A lane held `exclusive` is the wallet's only one: the first operation of an account not
-- deployed yet, or of a permission not enabled yet, runs alone.
CREATE TABLE wallet_nonce_lanes (
  chain_id integer NOT NULL,
  wallet text NOT NULL CHECK (wallet ~ '^0x[0-9a-f]{40}$'),
  lane integer NOT NULL CHECK (lane >= 0 AND lane <= 65535),
  intent_id uuid,
  exclusive boolean NOT NULL DEFAULT false,
  taken_at timestamptz,
  PRIMARY KEY (chain_id, wallet, lane)
);
CREATE INDEX wallet_nonce_lanes_holder ON wallet_nonce_lanes (intent_id) WHERE intent_id IS NOT NULL;

-- The signed operations of one wallet (what its prefund must cover at once).
CREATE INDEX intent_slices_signed_by_intent ON intent_slices (intent_id) WHERE state = 'signed';
