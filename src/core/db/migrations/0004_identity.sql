-- 0004 identity: accounts, SIWE nonces, sessions, API keys and where credentials were used.

-- An account is a wallet address proven by a SIWE signature. Retired in place on offboarding.
CREATE TABLE accounts (
  id text PRIMARY KEY,                       -- acc_…
  address text NOT NULL UNIQUE,              -- lowercase 0x address
  kind text NOT NULL DEFAULT 'agent',
  is_test_fixture boolean NOT NULL DEFAULT false,
  contact text,
  created_at timestamptz NOT NULL,
  offboarded_at timestamptz
);
CREATE INDEX accounts_test_fixture ON accounts (created_at) WHERE is_test_fixture;

-- Single-use sign-in nonces, valid 10 minutes. Consumed by one conditional UPDATE.
CREATE TABLE siwe_nonces (
  nonce text PRIMARY KEY,
  address text NOT NULL,                     -- lowercase; the message must name this address
  chain_id integer NOT NULL,
  message text NOT NULL,                     -- the exact message handed out
  issued_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  used_at timestamptz
);
CREATE INDEX siwe_nonces_expires_at ON siwe_nonces (expires_at);

-- Bearer sessions: only the SHA-256 of the token is stored.
CREATE TABLE sessions (
  id text PRIMARY KEY,                       -- ses_…
  account_id text NOT NULL REFERENCES accounts (id),
  token_hash text NOT NULL UNIQUE,
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  revoked_at timestamptz
);
CREATE INDEX sessions_account ON sessions (account_id, created_at DESC);

-- API keys: scopes, optional wallet pin and IP pin. Only the SHA-256 of the token is stored.
CREATE TABLE api_keys (
  id text PRIMARY KEY,                       -- key_…
  account_id text NOT NULL REFERENCES accounts (id),
  name text,
  token_hash text NOT NULL UNIQUE,
  token_prefix text NOT NULL,                -- first characters of the token, for recognising it
  scopes text[] NOT NULL,
  wallets text[],                            -- lowercase addresses; null = not wallet-pinned
  allowed_ips text[],                        -- IPv4/IPv6 addresses or CIDR blocks; null = any
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  revoked_at timestamptz,
  rotated_to text,                           -- the key that replaced this one
  rotated_from text,                         -- the key this one replaced
  created_by text NOT NULL                   -- session:<id> or key:<id>
);
CREATE INDEX api_keys_account ON api_keys (account_id, created_at DESC);

-- Network context of credential uses (sign-ins and key uses), one row per credential, address
-- and user agent, refreshed at most once a minute; deleted after 90 days of no use.
CREATE TABLE credential_uses (
  credential_id text NOT NULL,               -- ses_… or key_…
  account_id text NOT NULL,
  client_ip text NOT NULL,
  user_agent text NOT NULL,                  -- cut to 200 characters; '' when absent
  first_seen_at timestamptz NOT NULL,
  last_seen_at timestamptz NOT NULL,
  uses bigint NOT NULL DEFAULT 1,
  PRIMARY KEY (credential_id, client_ip, user_agent)
);
CREATE INDEX credential_uses_last_seen ON credential_uses (last_seen_at);
