-- 0016 webhook envelopes: what was actually sent for each event's delivery, kept beside the event.
-- The outbox row (webhook_deliveries) goes 14 days after it settles; the signed envelope stays:
-- the raw body and the `x-service-signature` header of the latest attempt, written by the
-- dispatcher in the statement that records the attempt's outcome. After 90 days (from the first
-- attempt) the housekeeping sweep compacts it to its hash, `sha256:<hex>` of the UTF-8 text
-- `<signature header value>` + LF + `<raw body>`; offboarding compacts the account's at once.
CREATE TABLE webhook_envelopes (
  event_id text PRIMARY KEY,
  account_id text NOT NULL,
  body text,                          -- the raw body as sent; null once compacted
  signature text,                     -- x-service-signature of the latest attempt; null once compacted
  attempts integer NOT NULL,          -- the attempt that sent this signature
  first_signed_at timestamptz NOT NULL,
  last_signed_at timestamptz NOT NULL,
  hash text CHECK (hash ~ '^sha256:[0-9a-f]{64}$'),
  compacted_at timestamptz,
  CHECK ((hash IS NULL) = (body IS NOT NULL)),
  CHECK ((hash IS NULL) = (signature IS NOT NULL)),
  CHECK ((hash IS NULL) = (compacted_at IS NULL))
);
CREATE INDEX webhook_envelopes_account ON webhook_envelopes (account_id) WHERE hash IS NULL;
CREATE INDEX webhook_envelopes_to_compact ON webhook_envelopes (first_signed_at) WHERE hash IS NULL;
