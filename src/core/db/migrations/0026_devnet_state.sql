-- 0026 The development devnet keeps its chains' state beside the embedded database across
-- restarts (src/devnet/state.ts). One row per devnet chain records what the database expects on
-- disk: the digest of the chain's state file written at the last clean stop, and whether a
-- process is running the chain now (still true after a process was killed). A start compares
-- and refuses to run the ledger against a chain that does not match it.

CREATE TABLE devnet_chain_states (
  chain_id integer PRIMARY KEY,
  state_sha256 text,
  running boolean NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now()
);
