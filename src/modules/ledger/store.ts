// The ledger's tables (migration 0009). Only this module writes them, through the functions of
// ledger.ts and holds.ts; the database refuses UPDATE and DELETE of groups and entries.

import type { Generated } from 'kysely';
import type { Timestamp } from '../../core/db/schema.ts';

export interface LedgerGroupsTable {
  seq: Generated<string>;
  id: string;
  settlement_id: string;
  fingerprint: string;
  account_id: string | null;
  kind: string;
  policy_hash: string | null;
  reverses: string | null;
  memo: unknown;
  created_at: Timestamp;
}

export interface LedgerEntriesTable {
  seq: Generated<string>;
  group_id: string;
  ledger_account: string;
  asset: string;
  /** numeric(78,0) as a decimal string: debit positive, credit negative. */
  amount: string;
}

export type HoldState = 'pending' | 'posted' | 'voided' | 'expired';

export interface LedgerHoldsTable {
  id: string;
  account_id: string | null;
  kind: string;
  debit_account: string;
  credit_account: string;
  asset: string;
  amount: string;
  posted_amount: string | null;
  state: HoldState;
  cap_key: string | null;
  policy_hash: string | null;
  posted_group_id: string | null;
  created_at: Timestamp;
  expires_at: Timestamp;
  closed_at: Timestamp | null;
}

export interface PrepaidBalancesTable {
  account_id: string;
  /** int8 as a decimal string (micro-USD). */
  balance_micro: string;
  held_micro: Generated<string>;
  updated_at: Timestamp;
  /** The account's auto-top-up threshold, mirrored from its rule by triggers (migration 0018). */
  auto_topup_below: Generated<string | null>;
}

declare module '../../core/db/schema.ts' {
  interface Database {
    ledger_groups: LedgerGroupsTable;
    ledger_entries: LedgerEntriesTable;
    ledger_holds: LedgerHoldsTable;
    prepaid_balances: PrepaidBalancesTable;
  }
}
