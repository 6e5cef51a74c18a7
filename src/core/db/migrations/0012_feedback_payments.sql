-- 0012 feedback payments: the x402 payment challenges POST /v1/feedback answers with.
--
-- A challenge is the 402 a caller received: what it was asked to pay (amount, payee, asset,
-- network) for which resource. x402 v1 carries no challenge id in the payment, so a payment is
-- linked to a challenge when it settles: the newest unused challenge of the same account for the
-- same resource and terms, issued before the payment was recorded (docs/payments.md). A payment
-- without any challenge is accepted as well (clients may pay up front).
--
-- Retention (spec section 8): unused challenges are deleted one day after they were issued, used
-- ones seven days after their use (job `housekeeping.payment_challenges`).

CREATE TABLE payment_challenges (
  id text PRIMARY KEY,                                  -- pch_…
  account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  resource text NOT NULL CHECK (char_length(resource) BETWEEN 1 AND 2048),   -- the URL paid for
  amount numeric(78, 0) NOT NULL CHECK (amount > 0),   -- maxAmountRequired, token base units
  payee text NOT NULL CHECK (payee ~ '^0x[0-9a-f]{40}$'),
  asset text NOT NULL CHECK (asset ~ '^0x[0-9a-f]{40}$'),
  network text NOT NULL CHECK (char_length(network) BETWEEN 1 AND 64),     -- x402 v1 name: base
  created_at timestamptz NOT NULL,
  used_at timestamptz,
  -- The settlement that paid it; kept (as null) if the settlement row is ever removed.
  settlement_id text REFERENCES payment_settlements (id) ON DELETE SET NULL,
  CHECK (settlement_id IS NULL OR used_at IS NOT NULL)
);
-- The link at settlement: the newest unused challenge of an account for a resource.
CREATE INDEX payment_challenges_unused ON payment_challenges (account_id, resource, created_at DESC)
  WHERE used_at IS NULL;
-- The retention sweep.
CREATE INDEX payment_challenges_unused_age ON payment_challenges (created_at) WHERE used_at IS NULL;
CREATE INDEX payment_challenges_used_age ON payment_challenges (used_at) WHERE used_at IS NOT NULL;
