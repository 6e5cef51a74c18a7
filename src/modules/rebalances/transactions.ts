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
    out.push({ ...signed, state: 'signed', gasUsed: null, effectiveGasPrice: null });
    nonce += 1n;
  }
  return out;
}

/**
 * Sends a recorded transaction (again). An error is fine when the chain has it already (a receipt,
 * or its nonce is used: `settle` then decides); anything else is thrown for the job to retry.
 */
export async function broadcast(chain: ChainPort, t: SignedTx): Promise<void> {
  try {
    await chain.sendRawTransaction(t.chainId, t.raw);
  } catch (err) {
    if (await chain.getReceipt(t.chainId, t.hash)) return;
    const mined = await chain.transactionCount(t.chainId, t.sender as Hex, 'latest');
    if (BigInt(mined) > t.nonce) return;
    throw err;
  }
}

export type Settled = SignedTx & { state: 'mined' | 'reverted' | 'dropped' };

/**
 * What became of a recorded transaction: waits up to `timeoutMs` for its receipt and records the
 * outcome (mined or reverted with its gas; dropped when its nonce was used by another). Null when
 * it is still pending.
 */
export async function settle(
  db: DbExecutor,
  chain: ChainPort,
  clock: Clock,
  t: SignedTx,
  timeoutMs: number,
): Promise<Settled | null> {
  if (t.state !== 'signed') return t as Settled;
  let receipt = await chain.getReceipt(t.chainId, t.hash);
  if (!receipt && timeoutMs > 0) {
    try {
      receipt = await chain.waitForReceipt(t.chainId, t.hash, { timeoutMs });
    } catch {
      receipt = await chain.getReceipt(t.chainId, t.hash);
    }
  }
  if (receipt) {
    const state = receipt.status === 'success' ? 'mined' : 'reverted';
    await settleTx(
      db,
      t.hash,
      {
        state,
        blockNumber: receipt.blockNumber,
        gasUsed: receipt.gasUsed,
        effectiveGasPrice: receipt.effectiveGasPrice,
      },
      clock.now(),
    );
    return { ...t, state, gasUsed: receipt.gasUsed, effectiveGasPrice: receipt.effectiveGasPrice };
  }
  const mined = await chain.transactionCount(t.chainId, t.sender as Hex, 'latest');
  if (BigInt(mined) > t.nonce && !(await chain.getReceipt(t.chainId, t.hash))) {
    await settleTx(db, t.hash, { state: 'dropped' }, clock.now());
    return { ...t, state: 'dropped' };
  }
  return null;
}

/** Wei a settled transaction cost its sender. */
export const gasWeiOf = (t: SignedTx): bigint => (t.gasUsed ?? 0n) * (t.effectiveGasPrice ?? 0n);
