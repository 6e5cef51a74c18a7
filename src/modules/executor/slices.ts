// A slice's operation, crash-safe: signed and recorded before anything is sent, then landed by
// one routine that serves a first attempt and a restart alike. A UserOperation's nonce is used
// once, so sending the recorded operation again can never execute it twice; and an operation
// whose nonce another one used can never land (it is `dropped`).

import { getAddress, type Hex, type LocalAccount } from 'viem';
import { entryPoint07Abi, entryPoint07Address } from 'viem/account-abstraction';
import { BundlerError, type BundlerPort, type UserOperationReceiptV07 } from '../../adapters/bundler/port.ts';
import { operationPart } from '../../adapters/bundler/operation-logs.ts';
import type { ChainPort } from '../../adapters/chain/port.ts';
import type { Clock } from '../../core/clock.ts';
import { withTransaction, type Db, type DbExecutor } from '../../core/db/database.ts';
import type { Call } from '../delegations/index.ts';
import type { ReceiptLog } from './fills.ts';
import { signSessionOperation, type SessionGrant, type SignedOperation } from './session-operation.ts';
import { insertSlice, settleSlice, type SliceFacts, type SliceRecord } from './store.ts';

export interface SliceDeps {
  db: Db;
  clock: Clock;
  chain: ChainPort;
  bundler: BundlerPort;
  sessionKey: LocalAccount;
  /**
   * Runs before a recorded operation is sent (again): what must be true on chain for it to be
   * taken, such as its prefund deposited (the executor's). Not run when the chain decided it.
   */
  beforeSend?: (slice: SliceRecord) => Promise<void>;
}

/** What became of a slice's operation; a landed or reverted one paid `gasCostWei` either way. */
export type SliceOutcome =
  | {
      state: 'landed' | 'reverted';
      txHash: Hex;
      /** The block the operation was mined in (the chain watcher's claim), when known. */
      blockNumber?: bigint;
      /** The EntryPoint's `actualGasCost`: what the account paid (from its deposit) for the operation. */
      gasCostWei: bigint;
      /** The operation's own logs (not the whole bundle's). */
      logs: ReceiptLog[];
      /** The revert data of a reverted execution, when the EntryPoint reported it. */
      revertReason?: string;
    }
  | { state: 'dropped' };

/** How far back a restart looks for the operation's event when the bundler no longer knows it. */
const EVENT_LOOKBACK_BLOCKS = 50_000n;

/**
 * Signs the slice's operation (unless `signed` is given: signed already) and commits its record
 * (state `signed`). Nothing is sent.
 */
export async function recordSignedSlice(
  deps: SliceDeps,
  slice: {
    intentId: string;
    seq: number;
    chainId: number;
    venue: string;
    grant: SessionGrant;
    calls: Call[];
    facts: SliceFacts;
  },
  signed?: SignedOperation,
): Promise<SliceRecord> {
  signed ??= await signSessionOperation(deps, slice.chainId, slice.grant, slice.calls);
  const record = {
    intentId: slice.intentId,
    seq: slice.seq,
    chainId: slice.chainId,
    venue: slice.venue,
    calls: slice.calls,
    op: signed.op,
    hash: signed.hash,
    facts: slice.facts,
  };
  await insertSlice(deps.db, record, deps.clock.now());
  return { ...record, state: 'signed', txHash: null };
}

/**
 * Brings a recorded slice to its outcome, on a first attempt or after a crash: its receipt when
 * the operation is on chain already; otherwise, while its nonce is unused, the recorded operation
 * is sent (again) and awaited; when another operation used the nonce, it is `dropped`. The
 * outcome is written on the record, and `onSettled` runs in the same transaction when this call
 * is the one that wrote it (never twice for a slice).
 */
export async function landSlice(
  deps: SliceDeps,
  slice: SliceRecord,
  wait: { timeoutMs: number; pollIntervalMs?: number },
  onSettled?: (tx: DbExecutor, outcome: SliceOutcome) => Promise<void>,
): Promise<SliceOutcome> {
  const outcome = await outcomeOf(deps, slice, wait);
  await settle(deps, slice, outcome, onSettled);
  return outcome;
}

/** Writes the outcome on the record once; what it means for the intent commits with it. */
async function settle(
  deps: Pick<SliceDeps, 'db' | 'clock'>,
  slice: SliceRecord,
  outcome: SliceOutcome,
  onSettled: ((tx: DbExecutor, outcome: SliceOutcome) => Promise<void>) | undefined,
): Promise<void> {
  await withTransaction(deps.db, async (tx) => {
    const txHash = outcome.state === 'dropped' ? null : outcome.txHash;
    const first = await settleSlice(tx, slice.intentId, slice.seq, outcome.state, txHash, deps.clock.now());
    if (first && onSettled) await onSettled(tx, outcome);
  });
}

/**
 * Settles a recorded slice as `dropped` without sending it again: the bundler refused the
 * operation (its simulation failed), so it never entered a mempool and its nonce stays unused.
 * `onSettled` runs as for landSlice.
 */
export async function dropSlice(
  deps: Pick<SliceDeps, 'db' | 'clock'>,
  slice: SliceRecord,
  onSettled?: (tx: DbExecutor, outcome: SliceOutcome) => Promise<void>,
): Promise<void> {
  await settle(deps, slice, { state: 'dropped' }, onSettled);
}

async function outcomeOf(
  deps: SliceDeps,
  slice: SliceRecord,
  wait: { timeoutMs: number; pollIntervalMs?: number },
): Promise<SliceOutcome> {
  const onChain = await onChainOutcome(deps, slice);
  if (onChain) return onChain;
  await deps.beforeSend?.(slice);
  try {
    await deps.bundler.sendUserOperation(slice.chainId, slice.op);
  } catch (err) {
    // AA25: the nonce was used meanwhile (by this operation, or another). Anything else is a
    // refusal of the operation itself, or no answer: the caller decides (it may be retried).
    if (!(err instanceof BundlerError && err.refusal === 'nonce')) throw err;
    // AA25 also answers for our own operation while it sits in a bundle not mined yet (the
    // bundler's simulation sees its nonce pending): wait for its receipt before calling it dropped.
    const own = await deps.bundler
      .waitForUserOperationReceipt(slice.chainId, slice.hash, wait)
      .catch(() => null);
    if (own) return fromReceipt(own);
    return fromEvent(deps, slice);
  }
  return fromReceipt(await deps.bundler.waitForUserOperationReceipt(slice.chainId, slice.hash, wait));
}

/** The outcome the chain already has for the slice (or `dropped`), or null while its nonce is unused. */
async function onChainOutcome(deps: SliceDeps, slice: SliceRecord): Promise<SliceOutcome | null> {
  const known = await deps.bundler.getUserOperationReceipt(slice.chainId, slice.hash);
  if (known) return fromReceipt(known);
  if (await nonceUsed(deps, slice)) return fromEvent(deps, slice);
  return null;
}

/**
 * Settles a recorded slice only if the chain has decided it (landed, reverted, or its nonce used
 * by another operation); never sends it. Null while it is still pending. For slices whose run
 * ended (interrupted with the operation unconfirmed): a late landing is still ledgered.
 */
export async function settleIfDecided(
  deps: SliceDeps,
  slice: SliceRecord,
  onSettled?: (tx: DbExecutor, outcome: SliceOutcome) => Promise<void>,
): Promise<SliceOutcome | null> {
  const outcome = await onChainOutcome(deps, slice);
  if (outcome) await settle(deps, slice, outcome, onSettled);
  return outcome;
}

function fromReceipt(receipt: UserOperationReceiptV07): SliceOutcome {
  return {
    state: receipt.success ? 'landed' : 'reverted',
    txHash: receipt.receipt.transactionHash,
    blockNumber: BigInt(receipt.receipt.blockNumber),
    gasCostWei: receipt.actualGasCost,
    logs: receipt.logs,
    ...(receipt.reason ? { revertReason: receipt.reason } : {}),
  };
}

/** Whether the EntryPoint has moved past the operation's nonce (its key's sequence). */
async function nonceUsed(deps: SliceDeps, slice: SliceRecord): Promise<boolean> {
  const key = slice.op.nonce >> 64n;
  const next = await deps.chain.publicClient(slice.chainId).readContract({
    address: entryPoint07Address,
    abi: entryPoint07Abi,
    functionName: 'getNonce',
    args: [getAddress(slice.op.sender), key],
  });
  return next > slice.op.nonce;
}

/** The operation's UserOperationEvent on chain, or `dropped` when another operation took its nonce. */
async function fromEvent(deps: SliceDeps, slice: SliceRecord): Promise<SliceOutcome> {
  const client = deps.chain.publicClient(slice.chainId);
  // The head now, not viem's cached one: the block that used the nonce may be newer than a head
  // read seconds ago, and a search that stops short of it would call a landed slice dropped.
  const head = await client.getBlockNumber({ cacheTime: 0 });
  const logs = await client.getContractEvents({
    address: entryPoint07Address,
    abi: entryPoint07Abi,
    eventName: 'UserOperationEvent',
    args: { userOpHash: slice.hash },
    fromBlock: head > EVENT_LOOKBACK_BLOCKS ? head - EVENT_LOOKBACK_BLOCKS : 0n,
    toBlock: head,
  });
  const event = logs[0];
  if (!event) return { state: 'dropped' };
  const receipt = await client.getTransactionReceipt({ hash: event.transactionHash });
  const part = operationPart(receipt.logs, slice.hash);
  if (!part) throw new Error(`transaction ${event.transactionHash} lacks the event of ${slice.hash}`);
  return {
    state: part.success ? 'landed' : 'reverted',
    txHash: event.transactionHash,
    blockNumber: receipt.blockNumber,
    gasCostWei: part.actualGasCost,
    logs: part.logs,
    ...(part.revertReason ? { revertReason: part.revertReason } : {}),
  };
}
