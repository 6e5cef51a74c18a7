-- 0013 auto-top-up: each account's rule (fire when the prepaid balance falls below a threshold, at
-- most max_per_month times a UTC month) and its quiver of arrows: pre-signed EIP-3009
-- authorizations paying USDC to the treasury, settled one at a time by the `auto_topup.fire` job
-- through the payments module (purpose `auto_topup`). See docs/payments.md, "Auto-top-up".

CREATE TABLE auto_topup_rules (
  account_id text PRIMARY KEY REFERENCES accounts (id) ON DELETE CASCADE,
  threshold_micro bigint NOT NULL CHECK (threshold_micro > 0),
  max_per_month integer NOT NULL CHECK (max_per_month BETWEEN 0 AND 100),
  -- Set after 3 consecutive failed arrows; a PUT of the rule clears it and the failure count.
  suspended boolean NOT NULL DEFAULT false,
  consecutive_failures integer NOT NULL DEFAULT 0 CHECK (consecutive_failures >= 0),
  -- The month's allowance is used up until then (start of the next UTC month): the trigger below
  -- enqueues nothing before it. A hint for the hot path only; the job decides from the arrows.
  quiet_until timestamptz,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);

-- ready → settling → settled | failed; ready → failed (refused when fired) | expired.
CREATE TABLE auto_topup_arrows (
  id text PRIMARY KEY,                          -- arw_…
  account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  chain_id integer NOT NULL,
  token text NOT NULL CHECK (token ~ '^0x[0-9a-f]{40}$'),
  payer text NOT NULL CHECK (payer ~ '^0x[0-9a-f]{40}$'),
  payee text NOT NULL CHECK (payee ~ '^0x[0-9a-f]{40}$'),
  value numeric(78, 0) NOT NULL CHECK (value > 0),
  valid_after numeric(78, 0) NOT NULL,
  valid_before numeric(78, 0) NOT NULL,
  nonce text NOT NULL CHECK (nonce ~ '^0x[0-9a-f]{64}$'),
  -- Destroyed (set to null) when the arrow is settled, failed or expired.
  signature text,
  status text NOT NULL CHECK (status IN ('ready', 'settling', 'settled', 'failed', 'expired')),
  settlement_id text,                           -- the payment settlement (pay_…) once known
  tx_hash text CHECK (tx_hash ~ '^0x[0-9a-f]{64}$'),
  fail_reason text,
  fired_at timestamptz,                         -- when it left the quiver (counts for the month)
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  -- An authorization belongs to one quiver, once.
  UNIQUE (chain_id, token, payer, nonce),
  CHECK ((status IN ('settled', 'failed', 'expired')) = (signature IS NULL)),
  CHECK (status <> 'settled' OR tx_hash IS NOT NULL),
  CHECK (status NOT IN ('settling', 'settled') OR fired_at IS NOT NULL)
);
CREATE INDEX auto_topup_arrows_account ON auto_topup_arrows (account_id, status, valid_before);
CREATE INDEX auto_topup_arrows_ready_expiry ON auto_topup_arrows (valid_before) WHERE status = 'ready';
CREATE INDEX auto_topup_arrows_settling ON auto_topup_arrows (updated_at) WHERE status = 'settling';

-- The trigger: a prepaid balance that went DOWN (a fee debit, a posted hold) below the account's
-- threshold enqueues the account's `auto_topup.fire` job, in the statement that moved the balance
-- (no extra round trip on the fee path). Accounts without a rule pay one primary-key probe. The
-- job row is deduplicated by the jobs table's singleton key (one unfinished fire job per account),
-- so concurrent debits crossing the threshold enqueue one job. Times come from the row's
-- updated_at, which purser_ledger_post sets from the application's clock.
CREATE OR REPLACE FUNCTION purser_auto_topup_watch() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF EXISTS (
       SELECT 1 FROM auto_topup_rules r
        WHERE r.account_id = NEW.account_id
          AND NOT r.suspended
          AND r.max_per_month > 0
          AND NEW.balance_micro < r.threshold_micro
          AND (r.quiet_until IS NULL OR r.quiet_until <= NEW.updated_at))
     AND EXISTS (
       SELECT 1 FROM auto_topup_arrows a
        WHERE a.account_id = NEW.account_id AND a.status = 'ready')
     AND NOT EXISTS (
       SELECT 1 FROM auto_topup_arrows a
        WHERE a.account_id = NEW.account_id AND a.status = 'settling') THEN
    INSERT INTO jobs (id, name, payload, state, attempts, max_attempts, run_at, singleton_key,
      created_at, updated_at)
    VALUES ('job_' || substr(replace(gen_random_uuid()::text, '-', ''), 1, 20), 'auto_topup.fire',
      jsonb_build_object('account_id', NEW.account_id), 'available', 0, 5, NEW.updated_at,
      NEW.account_id, NEW.updated_at, NEW.updated_at)
    -- enqueueJob's conflict target, word for word (the partial unique index jobs_singleton).
    ON CONFLICT (name, singleton_key) WHERE singleton_key IS NOT NULL AND state IN ('available', 'running')
    DO NOTHING;
  END IF;
  RETURN NULL;
END;
$$;

CREATE TRIGGER prepaid_balances_auto_topup AFTER UPDATE OF balance_micro ON prepaid_balances
  FOR EACH ROW WHEN (NEW.balance_micro < OLD.balance_micro)
  EXECUTE FUNCTION purser_auto_topup_watch();
