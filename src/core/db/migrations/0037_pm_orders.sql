-- 0037 prediction-market orders (docs/prediction-markets.md, "Orders"): each order Purser signed
-- or prepared, recorded before it is transmitted. Its open exposure (the notional at its limit
-- price) counts against the wallet's prediction_markets caps until it is filled, cancelled,
-- refused or swept; fills settle it from the ledger.
CREATE TABLE pm_orders (
  id text PRIMARY KEY,                                        -- pmo_…
  account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  wallet text NOT NULL CHECK (wallet ~ '^0x[0-9a-f]{40}$'),  -- the funder (maker)
  credential_id uuid NOT NULL REFERENCES venue_credentials (id) ON DELETE CASCADE,
  venue text NOT NULL CHECK (venue = 'polymarket'),
  client_order_id text,
  condition_id text NOT NULL CHECK (condition_id ~ '^0x[0-9a-f]{64}$'),
  token_id text NOT NULL CHECK (token_id ~ '^[0-9]{1,78}$'),
  side text NOT NULL CHECK (side IN ('buy', 'sell')),
  price_micro bigint NOT NULL CHECK (price_micro > 0 AND price_micro < 1000000),
  size_micro bigint NOT NULL CHECK (size_micro > 0),          -- shares, 6 decimals
  notional_micro bigint NOT NULL CHECK (notional_micro >= 0), -- USD at the limit price
  fee_micro bigint NOT NULL DEFAULT 0 CHECK (fee_micro >= 0),
  filled_micro bigint NOT NULL DEFAULT 0 CHECK (filled_micro >= 0), -- shares filled, from journaled fills
  fee_group_id text,
  flow text NOT NULL CHECK (flow IN ('hosted', 'client_signed')),
  -- prepared (client-signed, awaiting its signature) → transmitting → placed | rejected;
  -- prepared → swept; placed → cancelled | filled (venue-authoritative, as Purser learns it).
  status text NOT NULL CHECK (status IN ('prepared', 'transmitting', 'placed', 'rejected', 'swept',
                                         'cancelled', 'filled')),
  order_hash text CHECK (order_hash IS NULL OR order_hash ~ '^0x[0-9a-f]{64}$'), -- the venue's order id
  order_struct jsonb NOT NULL,                                -- the V2 order (and its signature once signed)
  state jsonb NOT NULL DEFAULT '{}'::jsonb,                   -- the caller's `state` object
  venue_status text,
  venue_error text,
  policy_version integer NOT NULL,
  policy_hash text NOT NULL,
  expires_at timestamptz,                                     -- a prepared order's signature deadline
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  UNIQUE (account_id, client_order_id)
);
CREATE UNIQUE INDEX pm_orders_hash ON pm_orders (order_hash) WHERE order_hash IS NOT NULL;
CREATE INDEX pm_orders_open ON pm_orders (wallet, condition_id) WHERE status IN ('prepared', 'transmitting', 'placed');
CREATE INDEX pm_orders_account ON pm_orders (account_id, created_at);
