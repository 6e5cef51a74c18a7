// Transactions the executor key signs and sends itself (a rebalance's approve, burn and mint).
// Each is signed with an explicit nonce and recorded BEFORE it is broadcast; a restart finds the
// recorded bytes and sends them again, so a transaction can land once and only once. Nonces come
// from one manager per (chain, executor): under a database lock, the next after both the chain's
// pending count and the last recorded nonce, handed out in order.

import type { Hex } from 'viem';
import { keccak256 } from 'viem';
import { privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import type { ChainPort } from '../../adapters/chain/port.ts';
import type { Clock } from '../../core/clock.ts';
import type { DbExecutor } from '../../core/db/database.ts';
import {
  insertSignedTx,
  lockSenderNonces,
  nextRecordedNonce,
  settleTx,
  type SignedTx,
  type TxPurpose,
} from './store.ts';

const accounts = new Map<string, PrivateKeyAccount>();

/** The executor's signing account (one per key per process). */
export function executorAccount(privateKey: Hex): PrivateKeyAccount {
  let account = accounts.get(privateKey);
  if (!account) accounts.set(privateKey, (account = privateKeyToAccount(privateKey)));
  return account;
}

export interface TxIntent {
  purpose: TxPurpose;
  to: Hex;
  data: Hex;
  gas: bigint;
}

/** What signing needs from the chain, read before the database transaction that records. */
export interface ChainState {
  pendingNonce: number;
  maxFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
}

export async function readChainState(chain: ChainPort, chainId: number, sender: Hex): Promise<ChainState> {
  const [pendingNonce, fees] = await Promise.all([
    chain.transactionCount(chainId, sender, 'pending'),
    chain.feesPerGas(chainId),
  ]);
  // Room for the base fee to double before the transactions land.
  return {
    pendingNonce,
    maxFeePerGas: fees.maxFeePerGas * 2n,
    maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
  };
}

/**
 * Signs `intents` with consecutive nonces and records them, in the caller's transaction (commit
 * before broadcasting). Consecutive nonces land in order, so an approve is always spent by the burn
 * signed right after it.
 */
export async function signAndRecord(
  tx: DbExecutor,
  clock: Clock,
  account: PrivateKeyAccount,
  chainId: number,
  state: ChainState,
  rebalanceId: string,
  intents: TxIntent[],
): Promise<SignedTx[]> {
  const sender = account.address.toLowerCase();
  await lockSenderNonces(tx, chainId, sender);
  const recorded = await nextRecordedNonce(tx, chainId, sender);
  let nonce = BigInt(state.pendingNonce);
  if (recorded !== null && recorded > nonce) nonce = recorded;
  const out: SignedTx[] = [];
  for (const intent of intents) {
    const raw = await account.signTransaction({
      type: 'eip1559',
      chainId,
      nonce: Number(nonce),
      to: intent.to,
      data: intent.data,
      value: 0n,
      gas: intent.gas,
      maxFeePerGas: state.maxFeePerGas,
      maxPriorityFeePerGas: state.maxPriorityFeePerGas,
    });
    const signed = {
      chainId,
      sender,
      nonce,
      hash: keccak256(raw),
      raw,
      purpose: intent.purpose,
      rebalanceId,
    };
    await insertSignedTx(tx, signed, clock.now());
    out.push({
      ...signed,
      state: 'signed',
      gasUsed: null,
      effectiveGasPrice: null,
      l1Fee: null,
      createdAt: clock.now(),
    });
    nonce += 1n;
  }
  return out;
}

/**
 * Sends a recorded transaction (again). An error is fine when the chain has it already: a receipt,
 * or its nonce taken in the mempool or a block ("already known", "nonce too low"; `settle` then
 * decides what became of it). Anything else is thrown for the job to retry.
 */
export async function broadcast(chain: ChainPort, t: SignedTx): Promise<void> {
  try {
    await chain.sendRawTransaction(t.chainId, t.raw);
  } catch (err) {
    if (await chain.getReceipt(t.chainId, t.hash)) return;
    const taken = await chain.transactionCount(t.chainId, t.sender as Hex, 'pending');
    if (BigInt(taken) > t.nonce) return;
    throw err;
  }
}

export type Settled = SignedTx & { state: 'mined' | 'reverted' | 'dropped' };

/**
 * How long a transaction whose nonce another one took must stay without a receipt before it is
 * called dropped: long enough that an RPC node behind the one that counted has caught up.
 */
export const DROPPED_AFTER_MS = 5 * 60_000;

/**
 * What became of a recorded transaction: waits up to `timeoutMs` for its receipt and records the
 * outcome (mined or reverted with its gas; dropped when its nonce was taken by another transaction
 * and it has had no receipt for DROPPED_AFTER_MS). Only a receipt of this very hash counts (a
 * replacement's receipt is not ours). Null when it is still pending.
 */
export async function settle(
  db: DbExecutor,
  chain: ChainPort,
  clock: Clock,
  t: SignedTx,
  timeoutMs: number,
): Promise<Settled | null> {
  if (t.state !== 'signed') return t as Settled;
  const ours = async () => {
    const r = await chain.getReceipt(t.chainId, t.hash);
    return r && r.hash.toLowerCase() === t.hash.toLowerCase() ? r : null;
  };
  let receipt = await ours();
  if (!receipt && timeoutMs > 0) {
    try {
      const waited = await chain.waitForReceipt(t.chainId, t.hash, { timeoutMs });
      receipt = waited.hash.toLowerCase() === t.hash.toLowerCase() ? waited : null;
    } catch {
      receipt = await ours();
    }
  }
  if (receipt) {
    const state = receipt.status === 'success' ? 'mined' : 'reverted';
    const outcome = {
      gasUsed: receipt.gasUsed,
      effectiveGasPrice: receipt.effectiveGasPrice,
      l1Fee: receipt.l1Fee,
    };
    await settleTx(db, t.hash, { state, blockNumber: receipt.blockNumber, ...outcome }, clock.now());
    return { ...t, state, ...outcome };
  }
  const mined = await chain.transactionCount(t.chainId, t.sender as Hex, 'latest');
  const old = clock.now().getTime() - t.createdAt.getTime() >= DROPPED_AFTER_MS;
  if (old && BigInt(mined) > t.nonce && !(await ours())) {
    await settleTx(db, t.hash, { state: 'dropped' }, clock.now());
    return { ...t, state: 'dropped' };
  }
  return null;
}

/** Wei a settled transaction cost its sender: execution gas, and the L1 data fee on OP-stack chains. */
export const gasWeiOf = (t: SignedTx): bigint =>
  (t.gasUsed ?? 0n) * (t.effectiveGasPrice ?? 0n) + (t.l1Fee ?? 0n);
