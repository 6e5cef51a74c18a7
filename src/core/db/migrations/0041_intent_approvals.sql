-- 0041 the approval tier (docs/policies.md, "Approvals"): an intent worth more than its policy's
-- spend.approvals.above_usd waits, planned, for a quorum of approvers' EIP-712 signatures. One row
-- per waiting (or once waiting) intent with what was asked; one row per approver who signed.

CREATE TABLE intent_approvals (
  intent_id uuid PRIMARY KEY REFERENCES intents (id) ON DELETE CASCADE,
  account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  chain_id integer NOT NULL,
  quorum integer NOT NULL CHECK (quorum >= 1),
  approvers text[] NOT NULL CHECK (cardinality(approvers) >= quorum),
  digest text NOT NULL CHECK (digest ~ '^0x[0-9a-f]{64}$'),
  typed_data jsonb NOT NULL,
  expires_at timestamptz NOT NULL,
  approved_at timestamptz,
  expired_at timestamptz,
  created_at timestamptz NOT NULL,
  CHECK (approved_at IS NULL OR expired_at IS NULL)
);
CREATE INDEX intent_approvals_account ON intent_approvals (account_id);

-- A second signature of one approver counts once: the key refuses it.
CREATE TABLE intent_approval_signatures (
  intent_id uuid NOT NULL REFERENCES intent_approvals (intent_id) ON DELETE CASCADE,
  approver text NOT NULL CHECK (approver ~ '^0x[0-9a-f]{40}$'),
  signature text NOT NULL,
  signed_at timestamptz NOT NULL,
  PRIMARY KEY (intent_id, approver)
);
