// Transactions the executor key signs and sends itself (a rebalance's approve, burn and mint).
// Each is signed with an explicit nonce and recorded BEFORE it is broadcast; a restart finds the
// recorded bytes and sends them again, so a transaction can land once and only once. Nonces come
// from one manager per (chain, executor): under a database lock, the next after both the chain's
// pending count and the last recorded nonce, handed out in order.

import type { Hex } from 'viem';
import { keccak256, parseTransaction } from 'viem';
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
  const [pendingNonce, fees, head] = await Promise.all([
    chain.transactionCount(chainId, sender, 'pending'),
    chain.feesPerGas(chainId),
    chain.latestBlock(chainId),
  ]);
  // Room for the base fee to double before the transactions land, from the estimate or from the
  // latest block's base fee, whichever is higher.
  const fromHead = (head.baseFeePerGas ?? 0n) * 2n + fees.maxPriorityFeePerGas;
  const doubled = fees.maxFeePerGas * 2n;
  return {
    pendingNonce,
    maxFeePerGas: doubled > fromHead ? doubled : fromHead,
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
    out.push(await signOne(tx, clock, account, chainId, rebalanceId, nonce, 1, intent, state));
    nonce += 1n;
  }
  return out;
}

/** Signs one transaction on `nonce` (attempt `attempt`) and records it. */
async function signOne(
  tx: DbExecutor,
  clock: Clock,
  account: PrivateKeyAccount,
  chainId: number,
  rebalanceId: string,
  nonce: bigint,
  attempt: number,
  intent: TxIntent,
  fees: Pick<ChainState, 'maxFeePerGas' | 'maxPriorityFeePerGas'>,
): Promise<SignedTx> {
  const raw = await account.signTransaction({
    type: 'eip1559',
    chainId,
    nonce: Number(nonce),
    to: intent.to,
    data: intent.data,
    value: 0n,
    gas: intent.gas,
    maxFeePerGas: fees.maxFeePerGas,
    maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
  });
  const signed = {
    chainId,
    sender: account.address.toLowerCase(),
    nonce,
    attempt,
    hash: keccak256(raw),
    raw,
    purpose: intent.purpose,
    rebalanceId,
  };
  await insertSignedTx(tx, signed, clock.now());
  return {
    ...signed,
    state: 'signed',
    gasUsed: null,
    effectiveGasPrice: null,
    l1Fee: null,
    createdAt: clock.now(),
  };
}

/**
 * Signs `replaced` again on its nonce with higher fees (at least 1/8 more, as nodes require of a
 * replacement, and at least twice the chain's estimate now) and records it as the next attempt, in
 * the caller's transaction. Whichever attempt lands, the nonce lands once.
 */
export async function signReplacement(
  tx: DbExecutor,
  clock: Clock,
  account: PrivateKeyAccount,
  replaced: SignedTx,
  estimate: Pick<ChainState, 'maxFeePerGas' | 'maxPriorityFeePerGas'>,
): Promise<SignedTx> {
  const before = parseTransaction(replaced.raw);
  if (before.type !== 'eip1559' || !before.to || before.gas === undefined) {
    throw new Error(`transaction ${replaced.hash} is not a recorded EIP-1559 call`);
  }
  const bump = (old: bigint | undefined, now: bigint) => {
    const raised = ((old ?? 0n) * 9n) / 8n + 1n;
    return raised > now ? raised : now;
  };
  const maxPriorityFeePerGas = bump(before.maxPriorityFeePerGas, estimate.maxPriorityFeePerGas);
  let maxFeePerGas = bump(before.maxFeePerGas, estimate.maxFeePerGas);
  if (maxFeePerGas < maxPriorityFeePerGas) maxFeePerGas = maxPriorityFeePerGas;
  const intent = { purpose: replaced.purpose, to: before.to, data: before.data ?? '0x', gas: before.gas };
  return signOne(
    tx,
    clock,
    account,
    replaced.chainId,
    replaced.rebalanceId,
    replaced.nonce,
    replaced.attempt + 1,
    intent,
    {
      maxFeePerGas,
      maxPriorityFeePerGas,
    },
  );
}

/**
 * Sends a recorded transaction (again). Fine when the chain has it already: a receipt, or its
 * nonce taken in the mempool or a block ("already known", "nonce too low"). Otherwise the node's
 * refusal is returned, not thrown (an underpriced transaction is refused once the base fee has
 * passed it): settling, and replacing it with higher fees, decide what happens next.
 */
export async function broadcast(chain: ChainPort, t: SignedTx): Promise<Error | null> {
  try {
    await chain.sendRawTransaction(t.chainId, t.raw);
    return null;
  } catch (err) {
    if (await chain.getReceipt(t.chainId, t.hash)) return null;
    const taken = await chain.transactionCount(t.chainId, t.sender as Hex, 'pending');
    if (BigInt(taken) > t.nonce) return null;
    return err instanceof Error ? err : new Error(String(err));
  }
}

export type Settled = SignedTx & { state: 'mined' | 'reverted' | 'dropped' };

/**
 * How long a transaction whose nonce another one took must stay without a receipt before it is
 * called dropped: long enough that an RPC node behind the one that counted has caught up.
 */
export const DROPPED_AFTER_MS = 5 * 60_000;

/**
 * What became of one nonce's recorded attempts (the first transaction and its replacements):
 * waits up to `timeoutMs` for the latest attempt's receipt and records the outcome. The attempt
 * with a receipt of its own hash (a replacement's receipt is not the others') is mined or
 * reverted; the others are dropped. With no receipt while the nonce was taken by a transaction not
 * recorded here, for DROPPED_AFTER_MS since the first attempt, all are dropped. Null while pending.
 */
export async function settleNonce(
  db: DbExecutor,
  chain: ChainPort,
  clock: Clock,
  attempts: SignedTx[],
  timeoutMs: number,
): Promise<Settled | null> {
  const latest = attempts.at(-1);
  if (!latest) throw new Error('no attempts to settle');
  const done = attempts.find((t) => t.state === 'mined' || t.state === 'reverted');
  if (done) return done as Settled;
  if (attempts.every((t) => t.state === 'dropped')) return latest as Settled;
  const receiptOf = async (t: SignedTx) => {
    const r = await chain.getReceipt(t.chainId, t.hash);
    return r && r.hash.toLowerCase() === t.hash.toLowerCase() ? r : null;
  };
  const find = async () => {
    for (const t of attempts) {
      const r = await receiptOf(t);
      if (r) return { t, r };
    }
    return null;
  };
  let found = await find();
  if (!found && timeoutMs > 0) {
    try {
      const waited = await chain.waitForReceipt(latest.chainId, latest.hash, { timeoutMs });
      if (waited.hash.toLowerCase() === latest.hash.toLowerCase()) found = { t: latest, r: waited };
    } catch {
      // not within the wait; looked for again below
    }
    found ??= await find();
  }
  if (found) {
    const { t, r } = found;
    const state = r.status === 'success' ? 'mined' : 'reverted';
    const outcome = { gasUsed: r.gasUsed, effectiveGasPrice: r.effectiveGasPrice, l1Fee: r.l1Fee };
    await settleTx(db, t.hash, { state, blockNumber: r.blockNumber, ...outcome }, clock.now());
    for (const other of attempts) {
      if (other !== t && other.state === 'signed')
        await settleTx(db, other.hash, { state: 'dropped' }, clock.now());
    }
    return { ...t, state, ...outcome };
  }
  const first = attempts[0]!;
  const old = clock.now().getTime() - first.createdAt.getTime() >= DROPPED_AFTER_MS;
  const mined = await chain.transactionCount(latest.chainId, latest.sender as Hex, 'latest');
  if (old && BigInt(mined) > latest.nonce && !(await find())) {
    for (const t of attempts)
      if (t.state === 'signed') await settleTx(db, t.hash, { state: 'dropped' }, clock.now());
    return { ...latest, state: 'dropped' };
  }
  return null;
}

/** The recorded transactions grouped by (chain, nonce), each group's attempts in order. */
export function byNonce(txs: SignedTx[]): SignedTx[][] {
  const groups = new Map<string, SignedTx[]>();
  for (const t of txs) {
    const key = `${t.chainId}:${t.nonce}`;
    const group = groups.get(key);
    if (group) group.push(t);
    else groups.set(key, [t]);
  }
  return [...groups.values()].map((g) => g.sort((a, b) => a.attempt - b.attempt));
}

/** Wei a settled transaction cost its sender: execution gas, and the L1 data fee on OP-stack chains. */
export const gasWeiOf = (t: SignedTx): bigint =>
  (t.gasUsed ?? 0n) * (t.effectiveGasPrice ?? 0n) + (t.l1Fee ?? 0n);
