// The payments module's table (migration 0011): settlements of EIP-3009 authorizations.

import { sql, type ColumnType, type RawBuilder, type Selectable } from 'kysely';
import type { DbExecutor } from '../../core/db/database.ts';
import type { Timestamp } from '../../core/db/schema.ts';

type NullableTimestamp = ColumnType<Date | null, Date | string | null, Date | string | null>;
type Json = Record<string, unknown>;

export type SettlementStatus = 'recorded' | 'broadcast' | 'settled' | 'failed';

export interface PaymentSettlementsTable {
  id: string;
  account_id: string;
  purpose: string;
  chain_id: number;
  token: string;
  payer: string;
  payee: string;
  value: string;
  valid_after: string;
  valid_before: string;
  nonce: string;
  signature: string | null;
  request: ColumnType<Json, Json | string, Json | string>;
  status: SettlementStatus;
  tx_hash: string | null;
  from_block: string;
  fail_reason: string | null;
  result: ColumnType<Json | null, Json | string | null, Json | string | null>;
  created_at: Timestamp;
  updated_at: Timestamp;
  settled_at: NullableTimestamp;
}

declare module '../../core/db/schema.ts' {
  interface Database {
    payment_settlements: PaymentSettlementsTable;
  }
}

export type SettlementRow = Selectable<PaymentSettlementsTable>;

/** What a new settlement is recorded with: the authorization, the request it carried and when. */
export type NewSettlementRow = Pick<
  PaymentSettlementsTable,
  | 'id'
  | 'account_id'
  | 'purpose'
  | 'chain_id'
  | 'token'
  | 'payer'
  | 'payee'
  | 'value'
  | 'valid_after'
  | 'valid_before'
  | 'nonce'
  | 'from_block'
> & { signature: string; request: Json; now: Date };

/** Inserts a settlement unless one exists for (chain, token, payer, nonce); returns the row that is there. */
export async function insertSettlement(
  db: DbExecutor,
  row: NewSettlementRow,
): Promise<{ row: SettlementRow; created: boolean }> {
  const inserted = await db
    .insertInto('payment_settlements')
    .values({
      id: row.id,
      account_id: row.account_id,
      purpose: row.purpose,
      chain_id: row.chain_id,
      token: row.token,
      payer: row.payer,
      payee: row.payee,
      value: row.value,
      valid_after: row.valid_after,
      valid_before: row.valid_before,
      nonce: row.nonce,
      signature: row.signature,
      request: JSON.stringify(row.request),
      status: 'recorded',
      from_block: row.from_block,
      created_at: row.now,
      updated_at: row.now,
    })
    .onConflict((oc) => oc.columns(['chain_id', 'token', 'payer', 'nonce']).doNothing())
    .returningAll()
    .executeTakeFirst();
  if (inserted) return { row: inserted, created: true };
  const existing = await findSettlementByNonce(db, row.chain_id, row.token, row.payer, row.nonce);
  if (!existing) throw new Error('payment settlement vanished between insert and read');
  return { row: existing, created: false };
}

export async function findSettlementByNonce(
  db: DbExecutor,
  chainId: number,
  token: string,
  payer: string,
  nonce: string,
): Promise<SettlementRow | undefined> {
  return db
    .selectFrom('payment_settlements')
    .selectAll()
    .where('chain_id', '=', chainId)
    .where('token', '=', token)
    .where('payer', '=', payer)
    .where('nonce', '=', nonce)
    .executeTakeFirst();
}

export async function findSettlement(db: DbExecutor, id: string): Promise<SettlementRow | undefined> {
  return db.selectFrom('payment_settlements').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Locks an unfinished settlement for its final transition; undefined when it is final already. */
export async function lockOpenSettlement(db: DbExecutor, id: string): Promise<SettlementRow | undefined> {
  return db
    .selectFrom('payment_settlements')
    .selectAll()
    .where('id', '=', id)
    .where('status', 'in', ['recorded', 'broadcast'])
    .forUpdate()
    .executeTakeFirst();
}

export async function markBroadcast(db: DbExecutor, id: string, txHash: string, now: Date): Promise<void> {
  await db
    .updateTable('payment_settlements')
    .set({ status: 'broadcast', tx_hash: txHash, updated_at: now })
    .where('id', '=', id)
    .where('status', 'in', ['recorded', 'broadcast'])
    .execute();
}

/** Touches an unfinished settlement so the reconciler leaves it alone for another period. */
export async function touchSettlement(db: DbExecutor, id: string, now: Date): Promise<void> {
  await db
    .updateTable('payment_settlements')
    .set({ updated_at: now })
    .where('id', '=', id)
    .where('status', 'in', ['recorded', 'broadcast'])
    .execute();
}

export async function markSettled(
  db: DbExecutor,
  id: string,
  txHash: string,
  result: Json,
  now: Date,
): Promise<void> {
  await db
    .updateTable('payment_settlements')
    .set({
      status: 'settled',
      tx_hash: txHash,
      result: JSON.stringify(result),
      signature: null,
      updated_at: now,
      settled_at: now,
    })
    .where('id', '=', id)
    .execute();
}

export async function markFailed(db: DbExecutor, id: string, reason: string, now: Date): Promise<void> {
  await db
    .updateTable('payment_settlements')
    .set({ status: 'failed', fail_reason: reason, signature: null, updated_at: now })
    .where('id', '=', id)
    .where('status', 'in', ['recorded', 'broadcast'])
    .execute();
}

/** Unfinished settlements untouched since `before`, oldest first: the reconciler's work. */
export async function listStaleSettlements(
  db: DbExecutor,
  before: Date,
  limit: number,
): Promise<SettlementRow[]> {
  return db
    .selectFrom('payment_settlements')
    .selectAll()
    .where('status', 'in', ['recorded', 'broadcast'])
    .where('updated_at', '<', before)
    .orderBy('updated_at')
    .limit(limit)
    .execute();
}

/** Deletes a settlement that was recorded and never sent (nothing left the service). */
export async function deleteUnsentSettlement(db: DbExecutor, id: string): Promise<void> {
  await db
    .deleteFrom('payment_settlements')
    .where('id', '=', id)
    .where('status', '=', 'recorded')
    .where('tx_hash', 'is', null)
    .execute();
}

/**
 * An expression: the value of settlements still open (recorded or broadcast) with one of
 * `purposes`, of one account or of all, in token base units as text. For callers that need it in
 * one statement with other reads (one snapshot: a settlement finishing meanwhile is counted either
 * as open or in the balance it credited).
 */
export function openSettlementsSql(purposes: readonly string[], accountId?: string): RawBuilder<string> {
  return sql<string>`(SELECT coalesce(sum(value), 0) FROM payment_settlements
    WHERE status IN ('recorded', 'broadcast') AND purpose IN (${sql.join([...purposes])})
    ${accountId === undefined ? sql`` : sql`AND account_id = ${accountId}`})::text`;
}
