// The intent_slices table (migration 0031): each slice's signed UserOperation, recorded before it
// is sent, and what became of it.

import { intentIdsWhere } from '../intents/index.ts';
import type { Selectable } from 'kysely';
import type { Hex } from 'viem';
import type { UserOperation } from 'viem/account-abstraction';
import type { DbExecutor } from '../../core/db/database.ts';
import type { Timestamp } from '../../core/db/schema.ts';
import type { Call } from '../delegations/index.ts';

export type SliceState = 'signed' | 'landed' | 'reverted' | 'dropped';

export interface IntentSlicesTable {
  intent_id: string;
  seq: number;
  chain_id: number;
  venue: string;
  calls: unknown;
  user_op: unknown;
  user_op_hash: string;
  state: SliceState;
  tx_hash: string | null;
  facts: unknown;
  created_at: Timestamp;
  updated_at: Timestamp;
}

declare module '../../core/db/schema.ts' {
  interface Database {
    intent_slices: IntentSlicesTable;
  }
}

/** What the executor planned for a slice, recorded with it (migration 0032). */
/** One venue's part of a split slice. */
export interface SlicePart {
  venue: string;
  sell_amount: string;
  quoted_buy_amount: string;
  venue_fee_amount: string;
  min_buy_amount: string;
  /** The spender its approve names (lowercase): its calls start at that approval. */
  allowance_target: string;
}

export interface SliceFacts {
  /** The index of the plan's part the slice carries (a dropped slice's part is carried again). */
  part: number;
  /** Sell-token base units the slice sells. */
  sell_amount: string;
  /** What the venue quoted for it, and the least the calls accept (buy-token base units). */
  quoted_buy_amount: string;
  min_buy_amount: string;
  /** The venue's fee in the quote (buy-token base units, already out of the quoted amount). */
  venue_fee_amount?: string;
  /** The independent reference then (buy-token base units per sell-token base unit = num/den), if any. */
  reference: { num: string; den: string } | null;
  /** Every venue's fresh quote for the slice, best first, when more than one was asked. */
  routing?: { venue: string; buy_amount: string }[];
  /**
   * A slice split between two venues (split.ts): each part's venue, share and quote, in the order
   * of their calls; the cut's gain over the best venue alone and the extra gas, in buy-token units.
   */
  split?: SlicePart[];
  split_gain?: string;
  split_gas_cost?: string;
  /** Wei the relayer deposited at the EntryPoint for the account's prefund before the slice. */
  sponsored_wei?: string;
  /**
   * Where the step's time went before the slice was recorded: wall-clock start of the step and of
   * the recording (unix ms), and the milliseconds of each phase (reconcile, checks, plan,
   * quote_build, sign, sponsor).
   */
  timings?: { started_at_ms: number; recorded_at_ms: number; ms: Record<string, number> };
}

export interface SliceRecord {
  intentId: string;
  seq: number;
  chainId: number;
  venue: string;
  calls: Call[];
  op: UserOperation<'0.7'>;
  hash: Hex;
  state: SliceState;
  txHash: Hex | null;
  facts: SliceFacts;
}

/** The integer fields of a v0.7 UserOperation, stored as decimal strings. */
const BIGINT_FIELDS = [
  'nonce',
  'callGasLimit',
  'verificationGasLimit',
  'preVerificationGas',
  'maxFeePerGas',
  'maxPriorityFeePerGas',
  'paymasterVerificationGasLimit',
  'paymasterPostOpGasLimit',
] as const;

function storedOp(op: UserOperation<'0.7'>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...op };
  for (const f of BIGINT_FIELDS) if (typeof op[f] === 'bigint') out[f] = op[f].toString();
  return out;
}

function loadedOp(stored: Record<string, unknown>): UserOperation<'0.7'> {
  const out: Record<string, unknown> = { ...stored };
  for (const f of BIGINT_FIELDS) if (typeof stored[f] === 'string') out[f] = BigInt(stored[f]);
  return out as unknown as UserOperation<'0.7'>;
}

const storedCalls = (calls: readonly Call[]) =>
  calls.map((c) => ({ to: c.to, data: c.data, value: c.value.toString() }));

const loadedCalls = (stored: unknown): Call[] =>
  (stored as { to: Hex; data: Hex; value: string }[]).map((c) => ({ ...c, value: BigInt(c.value) }));

function fromRow(r: Selectable<IntentSlicesTable>): SliceRecord {
  return {
    intentId: r.intent_id,
    seq: r.seq,
    chainId: r.chain_id,
    venue: r.venue,
    calls: loadedCalls(r.calls),
    op: loadedOp(r.user_op as Record<string, unknown>),
    hash: r.user_op_hash as Hex,
    state: r.state,
    txHash: r.tx_hash as Hex | null,
    facts: r.facts as SliceFacts,
  };
}

/** Records a signed slice (state `signed`): commit it before the operation is sent. */
export async function insertSlice(db: DbExecutor, slice: Omit<SliceRecord, 'state' | 'txHash'>, at: Date) {
  await db
    .insertInto('intent_slices')
    .values({
      intent_id: slice.intentId,
      seq: slice.seq,
      chain_id: slice.chainId,
      venue: slice.venue,
      calls: JSON.stringify(storedCalls(slice.calls)),
      user_op: JSON.stringify(storedOp(slice.op)),
      user_op_hash: slice.hash.toLowerCase(),
      state: 'signed',
      tx_hash: null,
      facts: JSON.stringify(slice.facts),
      created_at: at,
      updated_at: at,
    })
    .execute();
}

export async function findSlice(db: DbExecutor, intentId: string, seq: number): Promise<SliceRecord | null> {
  const row = await db
    .selectFrom('intent_slices')
    .selectAll()
    .where('intent_id', '=', intentId)
    .where('seq', '=', seq)
    .executeTakeFirst();
  return row ? fromRow(row) : null;
}

/** The intent's slices in the order they were recorded. */
export async function intentSlices(db: DbExecutor, intentId: string): Promise<SliceRecord[]> {
  const rows = await db
    .selectFrom('intent_slices')
    .selectAll()
    .where('intent_id', '=', intentId)
    .orderBy('seq')
    .execute();
  return rows.map(fromRow);
}

/** The slices still `signed` (maybe in flight), oldest first: what a restart reconciles. */
export async function signedSlices(db: DbExecutor, limit = 100): Promise<SliceRecord[]> {
  const rows = await db
    .selectFrom('intent_slices')
    .selectAll()
    .where('state', '=', 'signed')
    .orderBy('created_at')
    .limit(limit)
    .execute();
  return rows.map(fromRow);
}

/**
 * The signed operations (maybe in flight) of every intent of `wallet` on the chain: what its
 * prefund must cover at once.
 */
export async function walletSignedOperations(
  db: DbExecutor,
  chainId: number,
  wallet: string,
): Promise<UserOperation<'0.7'>[]> {
  const rows = await db
    .selectFrom('intent_slices as s')
    .select('s.user_op')
    .where('s.state', '=', 'signed')
    .where('s.chain_id', '=', chainId)
    .where('s.intent_id', 'in', intentIdsWhere(db, { wallet }))
    .execute();
  return rows.map((r) => loadedOp(r.user_op as Record<string, unknown>));
}

/** Settles a signed slice's state once; false when it was settled already. */
export async function settleSlice(
  db: DbExecutor,
  intentId: string,
  seq: number,
  state: Exclude<SliceState, 'signed'>,
  txHash: Hex | null,
  at: Date,
): Promise<boolean> {
  const updated = await db
    .updateTable('intent_slices')
    .set({ state, tx_hash: txHash?.toLowerCase() ?? null, updated_at: at })
    .where('intent_id', '=', intentId)
    .where('seq', '=', seq)
    .where('state', '=', 'signed')
    .returning('seq')
    .executeTakeFirst();
  return updated !== undefined;
}

/**
 * Slices still `signed` whose intent is no longer executing (its run ended with them unconfirmed),
 * oldest first: what the periodic reconciliation settles once the chain decides them.
 */
export async function abandonedSlices(db: DbExecutor, limit = 100): Promise<SliceRecord[]> {
  const rows = await db
    .selectFrom('intent_slices as s')
    .selectAll('s')
    .where('s.state', '=', 'signed')
    .where('s.intent_id', 'in', intentIdsWhere(db, { notStatus: 'executing' }))
    .orderBy('s.created_at')
    .limit(limit)
    .execute();
  return rows.map(fromRow);
}
