-- 0027 What the first UserOperation of a not yet deployed smart account needs. Confirm derives the
-- counterfactual account from the owner and index and keeps the index and the factory call that
-- deploys it (`factory`, `factory_data`), so the executor's first operation can carry the
-- deployment. Null for an account that was already deployed at confirm.
ALTER TABLE delegations ADD COLUMN account_index text CHECK (account_index ~ '^[0-9]{1,78}$');
ALTER TABLE delegations ADD COLUMN factory text CHECK (factory ~ '^0x[0-9a-f]{40}$');
ALTER TABLE delegations ADD COLUMN factory_data text CHECK (factory_data ~ '^0x[0-9a-f]*$');
