-- 0031 an intent's slices, each recorded with its signed UserOperation BEFORE it is sent, so that
-- after a crash the executor finds every operation that may be in flight and reconciles it (a
-- UserOperation nonce lands once: resending the recorded operation can never execute twice).
CREATE TABLE intent_slices (
  intent_id uuid NOT NULL REFERENCES intents (id) ON DELETE CASCADE,
  seq integer NOT NULL CHECK (seq >= 1),
  chain_id integer NOT NULL,
  venue text NOT NULL,
  calls jsonb NOT NULL,                        -- [{to, data, value}] as signed
  user_op jsonb NOT NULL,                      -- the signed operation, integers as decimal strings
  user_op_hash text NOT NULL UNIQUE CHECK (user_op_hash ~ '^0x[0-9a-f]{64}$'),
  -- signed: recorded, maybe sent; landed / reverted: included on chain (the operation's
  -- success flag); dropped: its nonce was used by another operation, so it can never land.
  state text NOT NULL CHECK (state IN ('signed', 'landed', 'reverted', 'dropped')),
  tx_hash text CHECK (tx_hash IS NULL OR tx_hash ~ '^0x[0-9a-f]{64}$'),
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (intent_id, seq)
);
-- What the executor reconciles first after a start: the slices not known to have settled.
CREATE INDEX intent_slices_signed ON intent_slices (created_at) WHERE state = 'signed';
