-- 0011 payments: on-chain payments to the platform (EIP-3009 USDC authorizations) and the
-- operator-adjustable platform settings (prepaid caps, the metering switch).
--
-- A payment settlement is written, with everything its effect needs, BEFORE anything is
-- broadcast; the effect (a prepaid credit, a fee debit and a feature request, an arrow settled)
-- is applied in the transaction that marks it settled. A crash anywhere in between leaves a row
-- the reconciler finishes from chain truth (docs/payments.md).

CREATE TABLE payment_settlements (
  id text PRIMARY KEY,                          -- pay_…
  account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  purpose text NOT NULL CHECK (purpose ~ '^[a-z][a-z0-9_]{0,31}$'),   -- topup | feedback | auto_topup
  chain_id integer NOT NULL,
  token text NOT NULL CHECK (token ~ '^0x[0-9a-f]{40}$'),
  payer text NOT NULL CHECK (payer ~ '^0x[0-9a-f]{40}$'),
  payee text NOT NULL CHECK (payee ~ '^0x[0-9a-f]{40}$'),
  value numeric(78, 0) NOT NULL CHECK (value > 0),
  valid_after numeric(78, 0) NOT NULL,
  valid_before numeric(78, 0) NOT NULL,
  nonce text NOT NULL CHECK (nonce ~ '^0x[0-9a-f]{64}$'),
  -- Destroyed (set to null) once the settlement is final: a used or dead authorization is no
  -- one's business, and an unused one must not outlive its purpose.
  signature text,
  -- What the effect needs (the feedback title and body, the arrow id…): written before broadcast.
  request jsonb NOT NULL DEFAULT '{}'::jsonb,
  status text NOT NULL CHECK (status IN ('recorded', 'broadcast', 'settled', 'failed')),
  tx_hash text CHECK (tx_hash ~ '^0x[0-9a-f]{64}$'),
  -- The chain head when the row was written: where the reconciler starts looking for the transfer.
  from_block numeric(78, 0) NOT NULL,
  fail_reason text,
  -- What the effect produced (the feature request id, the credit group…): read by retries.
  result jsonb,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  settled_at timestamptz,
  UNIQUE (chain_id, token, payer, nonce),
  CHECK ((status IN ('settled', 'failed')) = (signature IS NULL)),
  CHECK (status <> 'settled' OR (tx_hash IS NOT NULL AND result IS NOT NULL))
);
CREATE INDEX payment_settlements_open ON payment_settlements (updated_at) WHERE status IN ('recorded', 'broadcast');
CREATE INDEX payment_settlements_account ON payment_settlements (account_id, created_at DESC);

-- Platform settings an operator changes at run time (`purser ops`, /v1/ops/): a row overrides
-- the configured default. Keys: metering_enforced, prepaid_account_cap_usd, prepaid_float_cap_usd.
CREATE TABLE platform_settings (
  key text PRIMARY KEY CHECK (key ~ '^[a-z][a-z0-9_]{0,63}$'),
  value jsonb NOT NULL,
  updated_at timestamptz NOT NULL,
  updated_by text NOT NULL
);

-- Per-account prepaid cap set by an operator (instead of the platform default).
CREATE TABLE prepaid_account_caps (
  account_id text PRIMARY KEY REFERENCES accounts (id) ON DELETE CASCADE,
  cap_micro bigint NOT NULL CHECK (cap_micro >= 0),
  updated_at timestamptz NOT NULL,
  updated_by text NOT NULL
);
