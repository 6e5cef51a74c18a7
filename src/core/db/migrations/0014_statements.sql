-- 0014 statements: the exports of wallet statements, and the index that finds the fee groups
-- charged for one wallet's actions (docs/statements.md).
--
-- A statement's content is a function of (account, wallet, period, ledger range): the same inputs
-- give the same bytes, so an export is stored once per content hash as an immutable object
-- (filesystem or S3 bucket) under `statements/<account_id>/<sha256 hex>.<json|csv>`. This table
-- records which account generated which object; GET /v1/statements/exports/{content_hash} serves
-- only those of the caller's account. Deleting the account deletes its rows (the housekeeping
-- sweep of test accounts); the objects themselves are content-addressed and harmless if left.
CREATE TABLE statement_exports (
  account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  content_hash text NOT NULL CHECK (content_hash ~ '^sha256:[0-9a-f]{64}$'),
  format text NOT NULL CHECK (format IN ('json', 'csv')),
  wallet text NOT NULL CHECK (wallet ~ '^0x[0-9a-f]{40}$'),
  period text NOT NULL CHECK (period ~ '^[0-9]{4}-[0-9]{2}(-[0-9]{2})?$'),  -- UTC month or day
  object_key text NOT NULL,
  bytes bigint NOT NULL CHECK (bytes > 0),
  -- Ledger positions of the first and last entry the statement includes (null when it has none).
  first_seq bigint,
  last_seq bigint,
  created_at timestamptz NOT NULL,
  -- The bytes determine the format (a JSON document and a CSV table never coincide), so the hash
  -- alone identifies an export of the account.
  PRIMARY KEY (account_id, content_hash),
  CHECK ((first_seq IS NULL) = (last_seq IS NULL) AND (first_seq IS NULL OR first_seq <= last_seq))
);

-- Fee groups name the wallet whose action they were charged for in `memo.wallet` (lowercase;
-- `debitFee({wallet})`). A statement reads the fee groups of (account, wallet) through this index.
CREATE INDEX ledger_groups_memo_wallet ON ledger_groups (account_id, (memo ->> 'wallet'), seq)
  WHERE memo ? 'wallet';
