// The tables of the policies module: policy versions (append-only) and spend reservations.

import { sql, type RawBuilder, type Selectable } from 'kysely';
import { lockUntilCommit, type DbExecutor } from '../../core/db/database.ts';
import type { Timestamp } from '../../core/db/schema.ts';

export interface PoliciesTable {
  account_id: string;
  wallet: string;
  version: number;
  hash: string;
  document: unknown;
  defaulted: string[];
  created_at: Timestamp;
}

export type ReservationState = 'pending' | 'settled' | 'released' | 'expired';

export interface SpendReservationsTable {
  id: string;
  account_id: string;
  wallet: string;
  amount_micro_usd: string;
  settled_micro_usd: string | null;
  state: ReservationState;
  policy_version: number;
  created_at: Timestamp;
  expires_at: Timestamp;
  closed_at: Timestamp | null;
}

declare module '../../core/db/schema.ts' {
  interface Database {
    policies: PoliciesTable;
    spend_reservations: SpendReservationsTable;
  }
}

export type PolicyRow = Selectable<PoliciesTable>;

/**
 * Serializes writers of one (account, wallet) policy history until the transaction ends, in
 * every process. Taken before reading the latest version, so version n+1 is never contended.
 */
export async function lockPolicyHistory(tx: DbExecutor, accountId: string, wallet: string): Promise<void> {
  await lockUntilCommit(tx, `purser.policy:${accountId}:${wallet}`);
}

/** The wallet's latest policy version, or null. */
export function latestPolicy(db: DbExecutor, accountId: string, wallet: string): Promise<PolicyRow | null> {
  return policyRow(db, accountId, wallet, null);
}

/** One version of the wallet's policy history, or null. */
export function policyVersion(
  db: DbExecutor,
  accountId: string,
  wallet: string,
  version: number,
): Promise<PolicyRow | null> {
  return policyRow(db, accountId, wallet, version);
}

async function policyRow(
  db: DbExecutor,
  accountId: string,
  wallet: string,
  version: number | null,
): Promise<PolicyRow | null> {
  const history = db
    .selectFrom('policies')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('wallet', '=', wallet);
  const q =
    version === null ? history.orderBy('version', 'desc').limit(1) : history.where('version', '=', version);
  return (await q.executeTakeFirst()) ?? null;
}

export async function insertPolicy(tx: DbExecutor, row: PolicyRow): Promise<void> {
  await tx
    .insertInto('policies')
    .values({ ...row, document: JSON.stringify(row.document) })
    .execute();
}

/** Newest first; every wallet of the account when `wallet` is null. */
export async function listPolicyRows(
  db: DbExecutor,
  accountId: string,
  wallet: string | null,
  limit: number,
): Promise<PolicyRow[]> {
  let q = db.selectFrom('policies').selectAll().where('account_id', '=', accountId);
  if (wallet !== null) q = q.where('wallet', '=', wallet);
  return q.orderBy('created_at', 'desc').orderBy('wallet').orderBy('version', 'desc').limit(limit).execute();
}

/** The accounts with a policy for `wallet`. */
export async function accountsWithPolicyFor(db: DbExecutor, wallet: string): Promise<string[]> {
  const rows = await db
    .selectFrom('policies')
    .select('account_id')
    .where('wallet', '=', wallet)
    .distinct()
    .execute();
  return rows.map((r) => r.account_id);
}

/** The wallets the account has a policy for. */
export async function policyWalletsOf(db: DbExecutor, accountId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('policies')
    .select('wallet')
    .where('account_id', '=', accountId)
    .distinct()
    .execute();
  return rows.map((r) => r.wallet);
}

/**
 * A query for another module's statement: each wallet with a policy, with the account and time of
 * its first policy (`address`, `account_id`, `created_at`).
 */
export function firstPolicyPerWalletSql(): RawBuilder<unknown> {
  return sql`SELECT DISTINCT ON (wallet) wallet AS address, account_id, created_at FROM policies ORDER BY wallet, created_at`;
}
