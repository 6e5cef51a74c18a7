-- 0032 what the executor planned for each slice, recorded with it before it is sent: which part
-- of the plan it carries, what it sells, what the venue quoted and the least it may deliver, and
-- the reference price then. A slice reconciled after a crash is reported from these, never from a
-- fresh quote; the amounts that moved still come from its logs.
ALTER TABLE intent_slices ADD COLUMN facts jsonb NOT NULL DEFAULT '{}'::jsonb;
