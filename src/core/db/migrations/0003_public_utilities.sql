-- 0003 public utilities: sanctions screening lists (OFAC SDN digital-currency addresses) and the feature-request list.

-- One row per stored screening list: its publication facts and when it was last replaced.
CREATE TABLE screening_lists (
  list text PRIMARY KEY,            -- the name shown in screening results, e.g. 'OFAC SDN'
  publish_date date,                -- Publish_Date of the file
  record_count integer,             -- Record_Count of the file: entries, not addresses
  address_count integer NOT NULL,   -- (address, asset) rows stored
  source text NOT NULL,             -- download URL, or fixture:<file> in development
  synced_at timestamptz NOT NULL
);

-- The listed digital-currency addresses. A sync replaces a list's rows in one transaction.
CREATE TABLE screening_addresses (
  -- EVM addresses lowercased; other formats as published (base58 is case-sensitive)
  address text NOT NULL CHECK (char_length(address) BETWEEN 1 AND 256),
  list text NOT NULL REFERENCES screening_lists (list) ON DELETE CASCADE,
  asset text NOT NULL,              -- suffix of the idType "Digital Currency Address - <asset>"
  entry_uid text,                   -- uid of the sdnEntry naming it
  PRIMARY KEY (address, list, asset)
);
CREATE INDEX screening_addresses_list ON screening_addresses (list);

-- Feature requests. Public: id, title, status, created_at; never the body nor the requester.
CREATE TABLE feature_requests (
  id text PRIMARY KEY,              -- fr_…
  seq bigserial NOT NULL UNIQUE,    -- insertion order, breaks created_at ties
  account_id text NOT NULL,
  title text NOT NULL CHECK (char_length(title) BETWEEN 8 AND 120),
  body text NOT NULL CHECK (char_length(body) BETWEEN 20 AND 4000),
  status text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'planned', 'shipped', 'declined')),
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE INDEX feature_requests_newest ON feature_requests (created_at DESC, seq DESC);
CREATE INDEX feature_requests_account ON feature_requests (account_id, created_at DESC);
