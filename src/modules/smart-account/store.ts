// The prefund_deposits table (migration 0038): each EntryPoint deposit the relayer makes for an
// account, recorded before it is broadcast, and what became of it.

import type { Selectable } from 'kysely';
import type { Address, Hex } from 'viem';
import type { DbExecutor } from '../../core/db/database.ts';
import type { Timestamp } from '../../core/db/schema.ts';

export type DepositState = 'signed' | 'booked' | 'reverted' | 'dropped';

export interface PrefundDepositsTable {
  id: string;
  account_id: string;
  chain_id: number;
  wallet: string;
  intent_id: string | null;
  slice_seq: number | null;
  amount_wei: string;
  relayer: string;
  nonce: string;
  tx_hash: string;
  raw_tx: string;
  state: DepositState;
  created_at: Timestamp;
  updated_at: Timestamp;
}

declare module '../../core/db/schema.ts' {
  interface Database {
    prefund_deposits: PrefundDepositsTable;
  }
}

export interface PrefundDeposit {
  id: string;
  accountId: string;
  chainId: number;
  wallet: Address;
  intentId: string | null;
  sliceSeq: number | null;
  amountWei: bigint;
  relayer: Address;
  nonce: bigint;
  txHash: Hex;
  raw: Hex;
  state: DepositState;
  createdAt: Date;
}

function fromRow(r: Selectable<PrefundDepositsTable>): PrefundDeposit {
  return {
    id: r.id,
    accountId: r.account_id,
    chainId: r.chain_id,
    wallet: r.wallet as Address,
    intentId: r.intent_id,
    sliceSeq: r.slice_seq,
    amountWei: BigInt(r.amount_wei),
    relayer: r.relayer as Address,
    nonce: BigInt(r.nonce),
    txHash: r.tx_hash as Hex,
    raw: r.raw_tx as Hex,
    state: r.state,
    createdAt: new Date(r.created_at),
  };
}

/** Records a signed deposit (state `signed`): commit it before the transaction is broadcast. */
export async function insertDeposit(db: DbExecutor, d: Omit<PrefundDeposit, 'state'>): Promise<void> {
  await db
    .insertInto('prefund_deposits')
    .values({
      id: d.id,
      account_id: d.accountId,
      chain_id: d.chainId,
      wallet: d.wallet.toLowerCase(),
      intent_id: d.intentId,
      slice_seq: d.sliceSeq,
      amount_wei: d.amountWei.toString(),
      relayer: d.relayer.toLowerCase(),
      nonce: d.nonce.toString(),
      tx_hash: d.txHash.toLowerCase(),
      raw_tx: d.raw,
      state: 'signed',
      created_at: d.createdAt,
      updated_at: d.createdAt,
    })
    .execute();
}

/** The account's deposits still `signed` on the chain (maybe in flight), oldest first. */
export async function openDeposits(
  db: DbExecutor,
  chainId: number,
  wallet: Address,
): Promise<PrefundDeposit[]> {
  const rows = await db
    .selectFrom('prefund_deposits')
    .selectAll()
    .where('state', '=', 'signed')
    .where('chain_id', '=', chainId)
    .where('wallet', '=', wallet.toLowerCase())
    .orderBy('created_at')
    .execute();
  return rows.map(fromRow);
}

/** Deposits still `signed` that were recorded before `before`, oldest first: what a sweep looks at. */
export async function staleDeposits(db: DbExecutor, before: Date, limit = 100): Promise<PrefundDeposit[]> {
  const rows = await db
    .selectFrom('prefund_deposits')
    .selectAll()
    .where('state', '=', 'signed')
    .where('created_at', '<', before)
    .orderBy('created_at')
    .limit(limit)
    .execute();
  return rows.map(fromRow);
}

/** Settles a signed deposit's state once; false when it was settled already. */
export async function settleDepositRow(
  db: DbExecutor,
  id: string,
  state: Exclude<DepositState, 'signed'>,
  at: Date,
): Promise<boolean> {
  const updated = await db
    .updateTable('prefund_deposits')
    .set({ state, updated_at: at })
    .where('id', '=', id)
    .where('state', '=', 'signed')
    .returning('id')
    .executeTakeFirst();
  return updated !== undefined;
}

/** Wei booked for the deposits an operation asked for (by intent and slice). */
export async function bookedDepositsFor(db: DbExecutor, intentId: string, sliceSeq: number): Promise<bigint> {
  const row = await db
    .selectFrom('prefund_deposits')
    .select((eb) => eb.fn.sum<string | null>('amount_wei').as('total'))
    .where('intent_id', '=', intentId)
    .where('slice_seq', '=', sliceSeq)
    .where('state', '=', 'booked')
    .executeTakeFirst();
  return BigInt(row?.total ?? '0');
}
