// The orders table of the prediction-market module (migration 0037): each order recorded before it
// is transmitted, with the exposure it holds while open.

import { kindEntryTotals } from '../ledger/index.ts';
import { sql, type Selectable } from 'kysely';
import type { DbExecutor } from '../../core/db/database.ts';
import type { Timestamp } from '../../core/db/schema.ts';
import type { CredentialFlow } from './store.ts';

export type PmOrderStatus =
  'prepared' | 'transmitting' | 'placed' | 'rejected' | 'swept' | 'cancelled' | 'filled';
/** The statuses whose notional counts as open exposure. */
export const OPEN_STATUSES: PmOrderStatus[] = ['prepared', 'transmitting', 'placed'];

export interface PmOrdersTable {
  id: string;
  account_id: string;
  wallet: string;
  credential_id: string;
  venue: 'polymarket';
  client_order_id: string | null;
  condition_id: string;
  token_id: string;
  side: 'buy' | 'sell';
  price_micro: string;
  size_micro: string;
  notional_micro: string;
  fee_micro: string;
  /** Shares filled so far (6 decimals), from journaled fills. */
  filled_micro: string;
  fee_group_id: string | null;
  flow: CredentialFlow;
  status: PmOrderStatus;
  order_hash: string | null;
  order_struct: unknown;
  state: unknown;
  venue_status: string | null;
  venue_error: string | null;
  policy_version: number;
  policy_hash: string;
  expires_at: Timestamp | null;
  created_at: Timestamp;
  updated_at: Timestamp;
  /** The Idempotency-Key of the request that admitted it (place or prepare), and its fingerprint. */
  idempotency_key: string | null;
  request_fingerprint: string | null;
  /** The Idempotency-Key of the submit that claimed a prepared order, and its fingerprint. */
  submit_key: string | null;
  submit_fingerprint: string | null;
  /** When its transmit ended without an answer from the venue (the reconciler decides it). */
  unanswered_at: Timestamp | null;
}

declare module '../../core/db/schema.ts' {
  interface Database {
    pm_orders: PmOrdersTable;
  }
}

export type PmOrderRow = Selectable<PmOrdersTable>;

/**
 * Inserts the order; false when the account used its client_order_id, or the request's
 * Idempotency-Key, before (nothing written).
 */
export async function insertOrder(tx: DbExecutor, row: PmOrderRow): Promise<boolean> {
  const inserted = await tx
    .insertInto('pm_orders')
    .values({
      ...row,
      order_struct: JSON.stringify(row.order_struct),
      state: JSON.stringify(row.state ?? {}),
    })
    .onConflict((oc) => oc.doNothing())
    .returning('id')
    .executeTakeFirst();
  return inserted !== undefined;
}

/**
 * The exposure floor of a wallet, in all and in one market: the unfilled part of its open orders at
 * their limit notional, plus what its journaled fills hold at cost (pUSD paid for shares, less pUSD
 * received for shares sold, fees included; never below 0).
 */
export async function openExposure(
  tx: DbExecutor,
  accountId: string,
  wallet: string,
  market: string,
  position: { walletAccount: string; collateralAsset: string },
): Promise<{ totalMicro: bigint; marketMicro: bigint }> {
  const { rows } = await sql<{ total: string | null; market: string | null }>`
    SELECT sum(open)::text AS total, sum(open) FILTER (WHERE condition_id = ${market})::text AS market
    FROM pm_orders,
         LATERAL (SELECT notional_micro * (size_micro - least(filled_micro, size_micro)) / size_micro AS open) o
    WHERE account_id = ${accountId} AND wallet = ${wallet} AND status IN ('prepared', 'transmitting', 'placed')`.execute(
    tx,
  );
  // Collateral the account's fills took from the wallet (their entries on it are negative).
  const spent = await kindEntryTotals(tx, {
    accountId,
    kind: 'pm.fill',
    ledgerAccount: position.walletAccount,
    asset: position.collateralAsset,
    memo: { key: 'condition_id', value: market },
  });
  const positive = (n: bigint) => (n > 0n ? n : 0n);
  return {
    totalMicro: BigInt(rows[0]?.total ?? 0) + positive(-spent.total),
    marketMicro: BigInt(rows[0]?.market ?? 0) + positive(-spent.matching),
  };
}

export async function updateOrder(
  tx: DbExecutor,
  id: string,
  from: PmOrderStatus[],
  change: Partial<
    Pick<
      PmOrderRow,
      | 'status'
      | 'venue_status'
      | 'venue_error'
      | 'order_hash'
      | 'order_struct'
      | 'submit_key'
      | 'submit_fingerprint'
      | 'unanswered_at'
    >
  >,
  now: Date,
): Promise<PmOrderRow | null> {
  const set: Record<string, unknown> = { ...change, updated_at: now };
  if (change.order_struct !== undefined) set.order_struct = JSON.stringify(change.order_struct);
  return (
    (await tx
      .updateTable('pm_orders')
      .set(set)
      .where('id', '=', id)
      .where('status', 'in', from)
      .returningAll()
      .executeTakeFirst()) ?? null
  );
}

export async function getOrderByHash(
  db: DbExecutor,
  accountId: string,
  orderHash: string,
): Promise<PmOrderRow | null> {
  return (
    (await db
      .selectFrom('pm_orders')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('order_hash', '=', orderHash.toLowerCase())
      .executeTakeFirst()) ?? null
  );
}

/** Orders still transmitting since before `before` (a crash or a venue that did not answer). */
export async function transmittingBefore(db: DbExecutor, before: Date, limit: number): Promise<PmOrderRow[]> {
  return db
    .selectFrom('pm_orders')
    .selectAll()
    .where('status', '=', 'transmitting')
    .where('updated_at', '<', before)
    .orderBy('updated_at')
    .limit(limit)
    .execute();
}

/** The account's order admitted under an Idempotency-Key, or null. */
export async function findKeyedOrder(
  db: DbExecutor,
  accountId: string,
  key: string,
): Promise<PmOrderRow | null> {
  const row = await db
    .selectFrom('pm_orders')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('idempotency_key', '=', key)
    .executeTakeFirst();
  return row ?? null;
}
