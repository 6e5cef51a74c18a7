-- 0035 venue credentials: prediction-market trade credentials (Polymarket CLOB V2, Kalshi), sealed
-- at rest under the sealing keyring (AES-256-GCM, bound to account, venue and credential id).
-- docs/prediction-markets.md. Active until revoked; revocation overwrites the ciphertext with NULL.
CREATE TABLE venue_credentials (
  id uuid PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  venue text NOT NULL CHECK (venue IN ('polymarket', 'kalshi')),
  label text,
  -- hosted: the service holds the signing key; client_signed: the client signs orders itself.
  flow text NOT NULL CHECK (flow IN ('hosted', 'client_signed')),
  -- Non-secret display facts (signature type, funder, signer address, key hint).
  meta jsonb NOT NULL,
  signer_address text CHECK (signer_address IS NULL OR signer_address ~ '^0x[0-9a-f]{40}$'),
  funder text CHECK (funder IS NULL OR funder ~ '^0x[0-9a-f]{40}$'),
  sealed text,
  created_at timestamptz NOT NULL,
  revoked_at timestamptz,
  last_used_at timestamptz,
  -- The last usage-burst alert (one per hour at most).
  burst_alerted_at timestamptz,
  -- Active exactly while it holds its sealed material.
  CHECK ((revoked_at IS NULL) = (sealed IS NOT NULL))
);
CREATE INDEX venue_credentials_account ON venue_credentials (account_id, created_at, id);
-- The re-seal job's scan.
CREATE INDEX venue_credentials_sealed ON venue_credentials (id) WHERE sealed IS NOT NULL;

-- Uses per credential and minute (the volume watch's baseline; kept 8 days).
CREATE TABLE venue_credential_usage (
  credential_id uuid NOT NULL REFERENCES venue_credentials (id) ON DELETE CASCADE,
  minute timestamptz NOT NULL,
  uses integer NOT NULL CHECK (uses > 0),
  PRIMARY KEY (credential_id, minute)
);

-- The client networks (IPv4 /24, IPv6 /48) a credential was used from; network context, deleted
-- 90 days after it was last seen.
CREATE TABLE venue_credential_networks (
  credential_id uuid NOT NULL REFERENCES venue_credentials (id) ON DELETE CASCADE,
  network text NOT NULL,
  first_seen_at timestamptz NOT NULL,
  last_seen_at timestamptz NOT NULL,
  PRIMARY KEY (credential_id, network)
);
