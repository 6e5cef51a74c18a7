// A slice's operation, crash-safe: signed and recorded before anything is sent, then landed by
// one routine that serves a first attempt and a restart alike. A UserOperation's nonce is used
// once, so sending the recorded operation again can never execute it twice; and an operation
// whose nonce another one used can never land (it is `dropped`).

import { getAddress, type Hex, type LocalAccount } from 'viem';
import { entryPoint07Abi, entryPoint07Address } from 'viem/account-abstraction';
import { BundlerError, type BundlerPort, type UserOperationReceiptV07 } from '../../adapters/bundler/port.ts';
import type { ChainPort } from '../../adapters/chain/port.ts';
import type { Clock } from '../../core/clock.ts';
import type { Db } from '../../core/db/database.ts';
import type { Call } from '../delegations/index.ts';
import { signSessionOperation, type SessionGrant } from './session-operation.ts';
import { insertSlice, settleSlice, type SliceRecord } from './store.ts';

export interface SliceDeps {
  db: Db;
  clock: Clock;
  chain: ChainPort;
  bundler: BundlerPort;
  sessionKey: LocalAccount;
}

export type SliceOutcome =
  | { state: 'landed' | 'reverted'; txHash: Hex; receipt: UserOperationReceiptV07 | null }
  | { state: 'dropped' };

/** How far back a restart looks for the operation's event when the bundler no longer knows it. */
const EVENT_LOOKBACK_BLOCKS = 50_000n;

/** Signs the slice's operation and commits its record (state `signed`). Nothing is sent. */
export async function recordSignedSlice(
  deps: SliceDeps,
  slice: {
    intentId: string;
    seq: number;
    chainId: number;
    venue: string;
    grant: SessionGrant;
    calls: Call[];
  },
): Promise<SliceRecord> {
  const signed = await signSessionOperation(deps, slice.chainId, slice.grant, slice.calls);
  const record = {
    intentId: slice.intentId,
    seq: slice.seq,
    chainId: slice.chainId,
    venue: slice.venue,
    calls: slice.calls,
    op: signed.op,
    hash: signed.hash,
  };
  await insertSlice(deps.db, record, deps.clock.now());
  return { ...record, state: 'signed', txHash: null };
}

/**
 * Brings a recorded slice to its outcome, on a first attempt or after a crash: its receipt when
 * the operation is on chain already; otherwise, while its nonce is unused, the recorded operation
 * is sent (again) and awaited; when another operation used the nonce, it is `dropped`. The
 * outcome is written on the record.
 */
export async function landSlice(
  deps: SliceDeps,
  slice: SliceRecord,
  wait: { timeoutMs: number; pollIntervalMs?: number },
): Promise<SliceOutcome> {
  const outcome = await outcomeOf(deps, slice, wait);
  await settleSlice(
    deps.db,
    slice.intentId,
    slice.seq,
    outcome.state,
    outcome.state === 'dropped' ? null : outcome.txHash,
    deps.clock.now(),
  );
  return outcome;
}

async function outcomeOf(
  deps: SliceDeps,
  slice: SliceRecord,
  wait: { timeoutMs: number; pollIntervalMs?: number },
): Promise<SliceOutcome> {
  const known = await deps.bundler.getUserOperationReceipt(slice.chainId, slice.hash);
  if (known) return fromReceipt(known);
  if (await nonceUsed(deps, slice)) return fromEvent(deps, slice);
  try {
    await deps.bundler.sendUserOperation(slice.chainId, slice.op);
  } catch (err) {
    // AA25: the nonce was used meanwhile (by this operation, or another). Anything else is a
    // refusal of the operation itself, or no answer: the caller decides (it may be retried).
    if (!(err instanceof BundlerError && err.aaCode === 'AA25')) throw err;
    return fromEvent(deps, slice);
  }
  return fromReceipt(await deps.bundler.waitForUserOperationReceipt(slice.chainId, slice.hash, wait));
}

function fromReceipt(receipt: UserOperationReceiptV07): SliceOutcome {
  return {
    state: receipt.success ? 'landed' : 'reverted',
    txHash: receipt.receipt.transactionHash,
    receipt,
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
  const head = await client.getBlockNumber();
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
  return {
    state: event.args.success ? 'landed' : 'reverted',
    txHash: event.transactionHash,
    receipt: null,
  };
}
