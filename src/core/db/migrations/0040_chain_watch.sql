-- 0040 the chain watcher (docs/ledger.md, "The chain"): the wallets Purser keeps books for, one
-- cursor per chain, the hashes of the blocks it booked, each transfer it booked (or holds while
-- Purser's own booking of it may still come), the transactions Purser's own bookings explain, and
-- the differences between books and chain that reconciliation found (drifts).

-- A wallet on a chain, booked under one account (the first that named it). `opened_block` is the
-- block of its opening (null until the opening is booked): the chain's balance there, less what the
-- ledger held for it then, booked once against `external:<chain>`.
CREATE TABLE chain_watch_wallets (
  chain_id integer NOT NULL,
  address text NOT NULL CHECK (address ~ '^0x[0-9a-f]{40}$'),
  account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  role text NOT NULL CHECK (role IN ('policy', 'pm_funder', 'executor')),
  opened_block bigint,
  opening_group_id text,
  created_at timestamptz NOT NULL,
  PRIMARY KEY (chain_id, address)
);
CREATE INDEX chain_watch_wallets_account ON chain_watch_wallets (account_id);
CREATE INDEX chain_watch_wallets_unopened ON chain_watch_wallets (chain_id) WHERE opened_block IS NULL;

-- The next block the watcher reads on each chain, and the lease of the process reading it (one
-- reader per chain at a time; a lease that ran out, its holder killed, is taken over).
CREATE TABLE chain_watch_cursors (
  chain_id integer PRIMARY KEY,
  next_block bigint NOT NULL CHECK (next_block >= 0),
  lease_owner text,
  leased_until timestamptz,
  updated_at timestamptz NOT NULL
);

-- Hashes of the blocks the watcher booked in and of the ends of its ranges: a block whose hash
-- changed was reorganized away.
CREATE TABLE chain_watch_blocks (
  chain_id integer NOT NULL,
  number bigint NOT NULL,
  hash text NOT NULL CHECK (hash ~ '^0x[0-9a-f]{64}$'),
  PRIMARY KEY (chain_id, number)
);

-- One ERC-20 transfer's side at a watched wallet that none of Purser's own bookings explains:
-- pending (waiting for the grace period), booked (its group), reversed (its block was reorganized
-- away, or Purser's own booking of it came after all; the reversing group is in the ledger).
CREATE TABLE chain_watch_transfers (
  chain_id integer NOT NULL,
  tx_hash text NOT NULL CHECK (tx_hash ~ '^0x[0-9a-f]{64}$'),
  log_index integer NOT NULL CHECK (log_index >= 0),
  wallet text NOT NULL CHECK (wallet ~ '^0x[0-9a-f]{40}$'),
  block_number bigint NOT NULL,
  block_time timestamptz NOT NULL,
  token text NOT NULL CHECK (token ~ '^0x[0-9a-f]{40}$'),
  -- transfer: an ERC-20 Transfer; wrap / unwrap: the wrapped native coin's Deposit / Withdrawal,
  -- which move the native coin the other way in the same booking; gas: the EntryPoint's
  -- UserOperationEvent of an operation the wallet paid for (`token` is the EntryPoint).
  event text NOT NULL CHECK (event IN ('transfer', 'wrap', 'unwrap', 'gas')),
  amount numeric(78, 0) NOT NULL CHECK (amount <> 0),   -- in positive, out negative
  state text NOT NULL CHECK (state IN ('pending', 'booked', 'reversed')),
  group_id text,
  seen_at timestamptz NOT NULL,
  PRIMARY KEY (chain_id, tx_hash, log_index, wallet)
);
CREATE INDEX chain_watch_transfers_block ON chain_watch_transfers (chain_id, block_number);
CREATE INDEX chain_watch_transfers_pending ON chain_watch_transfers (chain_id, seen_at) WHERE state = 'pending';

-- A transaction one of Purser's own bookings explains for a wallet (a fill, a burn, a mint, a wrap,
-- a prefund deposit): its transfers at that wallet are matched, not booked again.
CREATE TABLE chain_tx_claims (
  chain_id integer NOT NULL,
  tx_hash text NOT NULL CHECK (tx_hash ~ '^0x[0-9a-f]{64}$'),
  wallet text NOT NULL CHECK (wallet ~ '^0x[0-9a-f]{40}$'),
  group_id text NOT NULL,
  block_number bigint,
  PRIMARY KEY (chain_id, tx_hash, wallet)
);
CREATE INDEX chain_tx_claims_wallet ON chain_tx_claims (chain_id, wallet, block_number);

-- A difference between the books and the chain for one (wallet, asset) at a block that nothing
-- explains. Suspected when first seen; raised (`ledger.drift`) when it is still there a grace
-- period later; resolved when books and chain agree again (`agreed`) or an operator booked an
-- adjustment (`adjusted`, with the reason and the group). At most one unresolved per (chain,
-- wallet, asset).
CREATE TABLE ledger_drifts (
  id text PRIMARY KEY,                               -- drf_…
  account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  chain_id integer NOT NULL,
  wallet text NOT NULL CHECK (wallet ~ '^0x[0-9a-f]{40}$'),
  asset text NOT NULL,
  ledger_amount numeric(78, 0) NOT NULL,
  chain_amount numeric(78, 0) NOT NULL,
  block bigint NOT NULL,
  first_seen_at timestamptz NOT NULL,
  raised_at timestamptz,
  resolved_at timestamptz,
  resolution text CHECK (resolution IN ('agreed', 'adjusted')),
  reason text,
  adjustment_group_id text,
  updated_at timestamptz NOT NULL,
  CHECK ((resolved_at IS NULL) = (resolution IS NULL))
);
CREATE UNIQUE INDEX ledger_drifts_open ON ledger_drifts (chain_id, wallet, asset) WHERE resolved_at IS NULL;
CREATE INDEX ledger_drifts_account ON ledger_drifts (account_id, first_seen_at DESC, id);

