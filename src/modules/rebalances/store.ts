// The tables of the rebalances module (migration 0034): rebalances, and the transactions the
// executor key signed for them (recorded before broadcast; their (chain, sender, nonce) key is the
// executor's nonce manager).

import { sql, type Selectable } from 'kysely';
import type { Hex } from 'viem';
import { lockUntilCommit, type DbExecutor } from '../../core/db/database.ts';
import type { Timestamp } from '../../core/db/schema.ts';
import type { Finality } from './cctp.ts';

export type RebalanceStatus = 'planned' | 'executing' | 'filled' | 'cancelled' | 'aborted';
export type RebalancePhase =
  'burn_pending' | 'burn_submitted' | 'awaiting_attestation' | 'mint_submitted' | 'minted';

export interface RebalancesTable {
  id: string;
  account_id: string;
  wallet: string;
  from_chain_id: number;
  to_chain_id: number;
  amount: string;
  finality: Finality;
  max_fee: string;
  status: RebalanceStatus;
  phase: RebalancePhase;
  policy_version: number;
  policy_hash: string;
  day: string;
  burn_tx: string | null;
  mint_tx: string | null;
  message: string | null;
  message_nonce: string | null;
  report: unknown;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export type TxState = 'signed' | 'mined' | 'reverted' | 'dropped';
export type TxPurpose = 'rebalance.approve' | 'rebalance.burn' | 'rebalance.mint';

export interface ExecutorTransactionsTable {
  chain_id: number;
  sender: string;
  nonce: string;
  attempt: number;
  hash: string;
  raw: string;
  purpose: TxPurpose;
  rebalance_id: string;
  state: TxState;
  block_number: string | null;
  gas_used: string | null;
  effective_gas_price: string | null;
  l1_fee: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

declare module '../../core/db/schema.ts' {
  interface Database {
    rebalances: RebalancesTable;
    executor_transactions: ExecutorTransactionsTable;
  }
}

/** What a rebalance's report carries (all optional; filled as it moves). */
export interface RebalanceReport {
  /** The fee the attestation executed (USDC base units, out of the amount). */
  fee?: string;
  /** What reached the wallet on the destination. */
  minted?: string;
  /** Native gas paid by the executor, in wei, per chain. */
  gas_wei?: Record<string, string>;
  /** In a 202 answer only (never stored): what the attestation service said. */
  attestation?: { status: string; checked_at: string };
  abort?: { reason: string; detail: string };
  cancel?: { reason: string; detail: string };
  /** A mint that did not land (reverted), and why it was sent again. */
  mint_failures?: { tx: string; at: string }[];
}

export interface RebalanceRow {
  id: string;
  account_id: string;
  wallet: string;
  from_chain_id: number;
  to_chain_id: number;
  amount: bigint;
  finality: Finality;
  max_fee: bigint;
  status: RebalanceStatus;
  phase: RebalancePhase;
  policy_version: number;
  policy_hash: string;
  day: string;
  burn_tx: Hex | null;
  mint_tx: Hex | null;
  message: Hex | null;
  message_nonce: Hex | null;
  report: RebalanceReport;
  created_at: Date;
  updated_at: Date;
}

const dayString = (d: unknown): string =>
  d instanceof Date ? d.toISOString().slice(0, 10) : String(d).slice(0, 10);

function fromRow(r: Selectable<RebalancesTable>): RebalanceRow {
  return {
    ...r,
    amount: BigInt(r.amount),
    max_fee: BigInt(r.max_fee),
    day: dayString(r.day),
    burn_tx: r.burn_tx as Hex | null,
    mint_tx: r.mint_tx as Hex | null,
    message: r.message as Hex | null,
    message_nonce: r.message_nonce as Hex | null,
    report: (r.report ?? {}) as RebalanceReport,
    created_at: new Date(r.created_at),
    updated_at: new Date(r.updated_at),
  };
}

export async function insertRebalance(tx: DbExecutor, row: RebalanceRow): Promise<void> {
  await tx
    .insertInto('rebalances')
    .values({
      ...row,
      amount: row.amount.toString(),
      max_fee: row.max_fee.toString(),
      report: JSON.stringify(row.report),
    })
    .execute();
}

/** One rebalance; `accountId` limits it to that account's (null: any, for jobs). */
export async function findRebalance(
  db: DbExecutor,
  id: string,
  accountId: string | null,
  options: { lock?: boolean } = {},
): Promise<RebalanceRow | null> {
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(id)) return null;
  let q = db.selectFrom('rebalances').selectAll().where('id', '=', id);
  if (accountId !== null) q = q.where('account_id', '=', accountId);
  const row = await (options.lock ? q.forUpdate() : q).executeTakeFirst();
  return row ? fromRow(row) : null;
}

export type RebalanceChange = Partial<
  Pick<RebalanceRow, 'status' | 'phase' | 'burn_tx' | 'mint_tx' | 'message' | 'message_nonce' | 'report'>
>;

/** Moves a rebalance on, only from `fromPhase` (and an open status); false when it had moved already. */
export async function updateRebalance(
  tx: DbExecutor,
  id: string,
  fromPhase: RebalancePhase,
  change: RebalanceChange,
  at: Date,
): Promise<boolean> {
  const { report, ...rest } = change;
  const updated = await tx
    .updateTable('rebalances')
    .set({ ...rest, ...(report === undefined ? {} : { report: JSON.stringify(report) }), updated_at: at })
    .where('id', '=', id)
    .where('phase', '=', fromPhase)
    .where('status', 'in', ['planned', 'executing'])
    .returning('id')
    .executeTakeFirst();
  return updated !== undefined;
}

/** Micro-USD (= USDC base units) of the wallet's rebalances of `day` that did not end without moving value. */
export async function rebalancedOn(tx: DbExecutor, wallet: string, day: string): Promise<bigint> {
  const row = await tx
    .selectFrom('rebalances')
    .select(sql<string>`coalesce(sum(amount), 0)::text`.as('total'))
    .where('wallet', '=', wallet)
    .where('day', '=', day)
    .where('status', 'not in', ['cancelled', 'aborted'])
    .executeTakeFirstOrThrow();
  return BigInt(row.total);
}

/** Serializes admissions of one wallet's rebalances (the daily cap) until the transaction ends. */
export async function lockRebalanceWallet(tx: DbExecutor, wallet: string): Promise<void> {
  await lockUntilCommit(tx, `purser.rebalance:${wallet}`);
}

/** Open rebalances in `phase` last moved before `before`, oldest first (what the sweeps pick up). */
export async function openRebalances(
  db: DbExecutor,
  phases: RebalancePhase[],
  before: Date,
  limit = 100,
): Promise<RebalanceRow[]> {
  const rows = await db
    .selectFrom('rebalances')
    .selectAll()
    .where('status', 'in', ['planned', 'executing'])
    .where('phase', 'in', phases)
    .where('updated_at', '<=', before)
    .orderBy('updated_at')
    .limit(limit)
    .execute();
  return rows.map(fromRow);
}

// ------------------------------------------------------------------ executor transactions

export interface SignedTx {
  chainId: number;
  sender: string;
  nonce: bigint;
  /** 1, then 2, 3… for replacements of the same nonce with higher fees. */
  attempt: number;
  hash: Hex;
  raw: Hex;
  purpose: TxPurpose;
  rebalanceId: string;
  state: TxState;
  gasUsed: bigint | null;
  effectiveGasPrice: bigint | null;
  l1Fee: bigint | null;
  createdAt: Date;
}

function txFromRow(r: Selectable<ExecutorTransactionsTable>): SignedTx {
  return {
    chainId: r.chain_id,
    sender: r.sender,
    nonce: BigInt(r.nonce),
    attempt: r.attempt,
    hash: r.hash as Hex,
    raw: r.raw as Hex,
    purpose: r.purpose,
    rebalanceId: r.rebalance_id,
    state: r.state,
    gasUsed: r.gas_used === null ? null : BigInt(r.gas_used),
    effectiveGasPrice: r.effective_gas_price === null ? null : BigInt(r.effective_gas_price),
    l1Fee: r.l1_fee === null ? null : BigInt(r.l1_fee),
    createdAt: new Date(r.created_at),
  };
}

/** Holds the executor's nonces of one chain until the transaction ends, in every process. */
export async function lockSenderNonces(tx: DbExecutor, chainId: number, sender: string): Promise<void> {
  await lockUntilCommit(tx, `purser.nonce:${chainId}:${sender}`);
}

/** The next nonce after the recorded ones (call under lockSenderNonces); null when none is recorded. */
export async function nextRecordedNonce(
  tx: DbExecutor,
  chainId: number,
  sender: string,
): Promise<bigint | null> {
  const row = await tx
    .selectFrom('executor_transactions')
    .select(sql<string | null>`(max(nonce) + 1)::text`.as('next'))
    .where('chain_id', '=', chainId)
    .where('sender', '=', sender)
    .executeTakeFirstOrThrow();
  return row.next === null ? null : BigInt(row.next);
}

export async function insertSignedTx(
  tx: DbExecutor,
  t: Omit<SignedTx, 'state' | 'gasUsed' | 'effectiveGasPrice' | 'l1Fee' | 'createdAt'>,
  at: Date,
) {
  await tx
    .insertInto('executor_transactions')
    .values({
      chain_id: t.chainId,
      sender: t.sender,
      nonce: t.nonce.toString(),
      attempt: t.attempt,
      hash: t.hash.toLowerCase(),
      raw: t.raw,
      purpose: t.purpose,
      rebalance_id: t.rebalanceId,
      state: 'signed',
      block_number: null,
      gas_used: null,
      effective_gas_price: null,
      l1_fee: null,
      created_at: at,
      updated_at: at,
    })
    .execute();
}

/** The transactions signed for a rebalance, in nonce order per chain. */
export async function rebalanceTxs(db: DbExecutor, rebalanceId: string): Promise<SignedTx[]> {
  const rows = await db
    .selectFrom('executor_transactions')
    .selectAll()
    .where('rebalance_id', '=', rebalanceId)
    .orderBy('created_at')
    .orderBy('nonce')
    .orderBy('attempt')
    .execute();
  return rows.map(txFromRow);
}

/** Settles a signed transaction once; false when it was settled already. */
export async function settleTx(
  tx: DbExecutor,
  hash: Hex,
  outcome: {
    state: Exclude<TxState, 'signed'>;
    blockNumber?: bigint;
    gasUsed?: bigint;
    effectiveGasPrice?: bigint;
    l1Fee?: bigint | null;
  },
  at: Date,
): Promise<boolean> {
  const updated = await tx
    .updateTable('executor_transactions')
    .set({
      state: outcome.state,
      block_number: outcome.blockNumber?.toString() ?? null,
      gas_used: outcome.gasUsed?.toString() ?? null,
      effective_gas_price: outcome.effectiveGasPrice?.toString() ?? null,
      l1_fee: outcome.l1Fee?.toString() ?? null,
      updated_at: at,
    })
    .where('hash', '=', hash.toLowerCase())
    .where('state', '=', 'signed')
    .returning('hash')
    .executeTakeFirst();
  return updated !== undefined;
}
