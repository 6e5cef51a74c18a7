-- 0039 the Idempotency-Key of prediction-market order routes (docs/prediction-markets.md,
-- "Idempotency-Key"). An order reaches a venue, so its key cannot live in a transaction around
-- the request: it is recorded on the order itself, claimed by the unique index below in the
-- admission's transaction, and a retry is answered from the order as it is now.
ALTER TABLE pm_orders
  ADD COLUMN idempotency_key text,            -- the key of POST /v1/pm/orders or /prepare
  ADD COLUMN request_fingerprint text,        -- sha256 of that request (method, path, query, body)
  ADD COLUMN submit_key text,                 -- the key of POST /v1/pm/orders/submit
  ADD COLUMN submit_fingerprint text,
  ADD COLUMN unanswered_at timestamptz;       -- when a transmit ended with no answer from the venue
CREATE UNIQUE INDEX pm_orders_idempotency_key ON pm_orders (account_id, idempotency_key)
  WHERE idempotency_key IS NOT NULL;
