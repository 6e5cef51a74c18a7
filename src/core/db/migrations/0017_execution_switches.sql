-- 0017 execution switches: a row is a switch that is OFF (no row: execution is on). Operators set
-- them for the environment, a venue, a wallet or an account (`purser ops switch`, /v1/ops/switches);
-- an account switches itself off with POST /v1/account/panic. Every change is also an audit fact,
-- so this table holds only the present state. Read on the path of every executing route
-- (src/modules/switches/service.ts, assertExecutionEnabled).
CREATE TABLE execution_switches (
  scope text NOT NULL CHECK (scope IN ('environment', 'venue', 'wallet', 'account')),
  target text NOT NULL,                      -- '' (environment), venue name, lowercase 0x address, acc_… id
  source text NOT NULL CHECK (source IN ('operator', 'panic')),
  reason text NOT NULL CHECK (length(reason) BETWEEN 1 AND 500),   -- shown to callers
  set_by text NOT NULL,                      -- 'operator', or the panicking credential (session:…, key:…)
  set_at timestamptz NOT NULL,
  -- The switched-off account, so that deleting an account (development test fixtures) takes its
  -- switches with it.
  account_ref text REFERENCES accounts (id) ON DELETE CASCADE,
  PRIMARY KEY (scope, target, source),
  CHECK ((scope = 'environment') = (target = '')),
  CHECK (scope <> 'wallet' OR target ~ '^0x[0-9a-f]{40}$'),
  CHECK (source = 'operator' OR scope = 'account'),
  CHECK ((scope = 'account') = (account_ref IS NOT NULL)),
  CHECK (account_ref IS NULL OR account_ref = target)
);
