-- 0036 rate lanes: platform-wide token buckets, one row per lane (`polymarket:orders`,
-- `polymarket:reads`, `polymarket:cancels`), shared by every Purser process
-- (src/modules/ratelanes/, docs/rate-lanes.md). No account data: a reference table under Citus.
-- No row means a full bucket; a take creates it. Capacity and refill rate are not stored: they
-- come from configuration at each take, so changing them needs no migration or reset.
CREATE TABLE rate_lanes (
  lane text PRIMARY KEY CHECK (lane ~ '^[a-z0-9_.-]+(:[a-z0-9_.-]+)*$' AND length(lane) <= 100),
  -- numeric, not double precision: refills add fractions (10 per second for 37 ms is 0.37), and
  -- the take compares tokens with the cost at the boundary. Decimal rates times millisecond
  -- elapsed times are exact in numeric, so a bucket never reads 0.9999999 where 1 token is due,
  -- and Retry-After is exact. One row per lane, so numeric's cost is nothing.
  tokens numeric NOT NULL CHECK (tokens >= 0),
  -- The instant (by the taking process's clock) up to which the bucket has been refilled. It
  -- only moves forward, so a process whose clock lags refills nothing rather than negative.
  refilled_at timestamptz NOT NULL,
  -- Whether the latest take was granted. The take is one upsert, and PostgreSQL 15's RETURNING
  -- sees only the new row; this is how that statement reports its own decision (diagnostics too:
  -- false means the lane is spent).
  last_take_ok boolean NOT NULL
);
